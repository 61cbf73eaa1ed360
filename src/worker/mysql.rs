//! MySQL worker registry on NotFound9's `leaf_workerid_alloc` table (filled in below).
