//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serveLockFile is the file in the data dir that a serving process holds
// an exclusive lock on.
const serveLockFile = "serve.lock"

// lockDataDir takes the data dir's serve lock (an flock on serve.lock,
// which the kernel releases when the process ends however it ends) and
// writes the pid into the file. If another process holds it, the error
// says so and names that process. Only serve takes it: operator commands
// (verify, replay, restore, wallet, import, passwd) run beside a service.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, serveLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if b, err := os.ReadFile(path); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					holder = "process " + strconv.Itoa(pid)
				}
			}
			return nil, fmt.Errorf("data dir %s is already served by %s (lock %s held): one serve per data dir; stop it first, or give another --data", dir, holder, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
