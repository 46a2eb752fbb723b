package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// build is one of the two trees compared: its source, its binaries and
// what its serve can do.
type build struct {
	label    string // "REF b1de16a" or "HEAD be20d32"
	short    string // "REF" or "HEAD"
	describe string // the commit and its subject, for the report
	src      string // the source tree
	dir      string // its binaries and data dirs
	bin      string // its tradeledger
	sqlite   string // its eventstore/sqlite test binary
	// snapshots: serve has --snapshot-every and --snapshot-dir, and there
	// is `tradeledger snapshot` (not before the read-model snapshots).
	snapshots bool

	data     string // the log start, replay and verify read (imported at prepare)
	snapDir  string // its read-model snapshot, outside data ("" without)
	placed   string // a copy of data the placements go into
	token    string // an admin token of data and placed (their keys are the same)
	chURL    string // its ClickHouse database, exported from data
	serveLog string
}

// buildRef extracts REF with `git archive` into the work directory and
// builds it there: the working tree and the repository's worktrees are
// left alone.
func (m *Main) buildRef(ctx context.Context) (*build, error) {
	commit, err := gitOutput(ctx, m.repo, "rev-parse", "--verify", "--short", m.Ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("REF %q is not a commit: %w", m.Ref, err)
	}
	b := &build{label: "REF " + commit, short: "REF", dir: filepath.Join(m.work, "ref")}
	b.src = filepath.Join(b.dir, "src")
	if err := os.RemoveAll(b.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.src, 0o755); err != nil {
		return nil, err
	}
	archive := exec.CommandContext(ctx, "git", "-C", m.repo, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	archive.Stderr = &stderr
	out, err := archive.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := archive.Start(); err != nil {
		return nil, err
	}
	extractErr := untar(out, b.src)
	if err := archive.Wait(); err != nil {
		return nil, fmt.Errorf("git archive %s: %v: %s", commit, err, stderr.String())
	}
	if extractErr != nil {
		return nil, extractErr
	}
	subject, _ := gitOutput(ctx, m.repo, "log", "-1", "--format=%s", commit)
	b.describe = commit + " (" + truncate(subject, 60) + ")"
	m.logf("building %s in %s", b.label, b.src)
	return b, m.compile(ctx, b)
}

// buildHead builds the working tree as it is (uncommitted changes
// included, said in the report).
func (m *Main) buildHead(ctx context.Context) (*build, error) {
	commit, err := gitOutput(ctx, m.repo, "rev-parse", "--short", "HEAD")
	if err != nil {
		return nil, err
	}
	b := &build{label: "HEAD " + commit, short: "HEAD", src: m.repo, dir: filepath.Join(m.work, "head")}
	subject, _ := gitOutput(ctx, m.repo, "log", "-1", "--format=%s", "HEAD")
	b.describe = commit + " (" + truncate(subject, 60) + ")"
	if status, _ := gitOutput(ctx, m.repo, "status", "--porcelain", "--untracked-files=no"); status != "" {
		b.label += "+changes"
		b.describe += " with the working tree's uncommitted changes"
	}
	if err := os.RemoveAll(b.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, err
	}
	m.logf("building %s in %s", b.label, b.src)
	return b, m.compile(ctx, b)
}

// compile builds b's tradeledger and eventstore/sqlite test binary, and
// finds out whether its serve has read-model snapshots.
func (m *Main) compile(ctx context.Context, b *build) error {
	b.bin = filepath.Join(b.dir, "tradeledger")
	b.sqlite = filepath.Join(b.dir, "sqlite.test")
	for _, args := range [][]string{
		{"build", "-o", b.bin, "./cmd/tradeledger"},
		{"test", "-c", "-o", b.sqlite, "./eventstore/sqlite"},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = b.src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: go %s: %v\n%s", b.label, strings.Join(args, " "), err, out)
		}
	}
	// serve -h lists its flags (and exits 0 or 2, as flag.ErrHelp does).
	help, _ := exec.CommandContext(ctx, b.bin, "serve", "-h").CombinedOutput()
	b.snapshots = bytes.Contains(help, []byte("-snapshot-every")) && bytes.Contains(help, []byte("-snapshot-dir"))
	b.serveLog = filepath.Join(b.dir, "serve.log")
	return nil
}

// untar extracts the tar stream r (git archive's) under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading git archive: %w", err)
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if name == "." || strings.HasPrefix(name, ".."+string(filepath.Separator)) || filepath.IsAbs(name) {
			continue
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}

// gitOutput runs git in dir and returns its output, trimmed.
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
