//go:build !linux

package sqlite

import "os"

// fdatasync flushes f to stable storage (fsync where fdatasync is not
// available).
func fdatasync(f *os.File) error { return f.Sync() }
