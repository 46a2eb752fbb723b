//go:build unix

package projections

import (
	"errors"
	"os"
	"syscall"
)

// openSnapshotFile opens the regular file at path for reading or, with
// write, for writing (pruning shrinks a file before removing it), without
// following a symbolic link (O_NOFOLLOW) and without waiting for a FIFO's
// writer (O_NONBLOCK), and refuses anything but a regular file: a name in
// the snapshot directory may be a link to a file elsewhere, a FIFO or a
// device that someone put there. soleLink reports whether the file has no
// other name (a hard link's target is not a snapshot's to shrink).
func openSnapshotFile(path string, write bool) (f *os.File, soleLink bool, err error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_WRONLY
	}
	f, err = os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, notRegular(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, false, errNotRegular(path, st.Mode())
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return f, ok && sys.Nlink == 1, nil
}

// notRegular turns the error of opening path without following a link
// into one that says so.
func notRegular(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return errNotRegular(path, os.ModeSymlink)
	}
	return err
}
