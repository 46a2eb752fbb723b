//go:build !unix

package projections

import "os"

// openSnapshotFile opens the regular file at path for reading or, with
// write, for writing, refusing anything but a regular file (a link, a
// FIFO, a device): checked before it is opened (Lstat, which does not
// follow a link) and after (the file opened is the one checked). soleLink
// is false: this system does not say how many names a file has.
func openSnapshotFile(path string, write bool) (f *os.File, soleLink bool, err error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, false, err
	}
	if !before.Mode().IsRegular() {
		return nil, false, errNotRegular(path, before.Mode())
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_WRONLY
	}
	if f, err = os.OpenFile(path, flag, 0); err != nil {
		return nil, false, err
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(before, st) {
		f.Close()
		return nil, false, errNotRegular(path, before.Mode())
	}
	return f, false, nil
}
