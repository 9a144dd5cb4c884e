//! Chrome Trace Event export (not yet).
