//! OO7 workload generator (not yet).
