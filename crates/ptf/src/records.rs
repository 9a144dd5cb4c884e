//! tramp Source/Sink adapters (not yet).
