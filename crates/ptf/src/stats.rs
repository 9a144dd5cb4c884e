//! Per-trace statistics (not yet).
