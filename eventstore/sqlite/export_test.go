package sqlite

// RawScan reads every row of the file at path through the store's row
// reader without decoding any: the reference of BenchmarkReplay.
func RawScan(path string) (int, error) {
	r, err := openRowReader(path)
	if err != nil {
		return 0, err
	}
	defer r.close()
	return r.countRows(0)
}
