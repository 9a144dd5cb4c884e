//! Spans (not yet).
