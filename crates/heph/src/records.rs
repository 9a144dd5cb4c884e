//! tramp adapters (not yet).
