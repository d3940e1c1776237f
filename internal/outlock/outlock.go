// Package outlock keeps two processes from writing one output at once, and
// names the temporary files and folders written beside an output so that the
// next process to hold it can remove those a killed one left.
//
// An output is a path a command creates or replaces: a shard folder
// (ingest), a simulation (simulate), a run directory (fit). Its lock is the
// file .BASE.lock beside it, held with flock(2) for the whole command and
// removed when released; BASE is the last element of the output's path
// with symbolic links resolved, so that every name of the output takes one
// lock. A process that dies for any reason, SIGKILL included, loses the
// lock with its file descriptors. The lock file records the holder's pid, host and command, so
// that a refused process can say who holds it.
//
// Some outputs are written by several processes at once, each its own part
// of it, such as the tasks of a job array that fit one run directory (each
// also locks its own part exclusively). They take the lock shared
// (AcquireShared), which keeps out an exclusive holder (a process that
// creates, replaces or works on the whole output) and is kept out by one;
// shared holders record nothing, and the last to leave removes the file.
//
// Temporaries beside an output are named after it with a kind and 12 random
// hex digits (BASE.tmp-3f9c0a1b2c4d, .BASE.spill-…, BASE.old-…). Only a
// holder of the output's lock writes them, so a holder finds those of a dead
// process by name (Lock.RemoveStale) and removes them; the files written
// inside a folder the holder owns outright, such as a run directory, are
// found with RemoveTempsIn.
//
//	lk, err := outlock.Acquire(out, log)
//	if err != nil {
//		return err // names the holder
//	}
//	defer lk.Release()
//	lk.RemoveStale()
//
// Every output, a file or a folder, takes its place the same way: written
// whole under a temporary name beside it (TempFile, or TempDir filled by
// WriteFile), synced, and renamed into place by Install, which moves a
// replaced folder aside under a temporary's name and syncs the folder that
// holds it; CommitDir does all of it for a folder, lock included.
//
// New folders are made with mode 0777 and files with 0666, so that the
// process's umask decides who may read them, as for any Unix tool.
package outlock

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"scpipe/internal/infile"
)

// ErrLocked is matched (errors.Is) by the error Acquire returns when
// another process holds the output's lock.
var ErrLocked = errors.New("output locked by another process")

// lockedError names the output, its holder and the lock file; shared says
// that the holders share the lock, and holder is then unknown.
type lockedError struct {
	output, holder, path string
	shared               bool
}

func (e *lockedError) Error() string {
	if e.shared {
		return fmt.Sprintf("%s is being written by processes that share it, each its own part (such as the tasks of a job array); wait for them to finish or stop them (lock file %s)", e.output, e.path)
	}
	return fmt.Sprintf("%s is being written by %s; wait for it to finish or stop it (lock file %s)", e.output, e.holder, e.path)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// suffixLen is the number of random hex digits in a temporary's name.
const suffixLen = 12

// kinds are the temporaries an output may have beside it: tmp (a folder or
// file being written), spill (ingest's entry file), old (a replaced output
// being deleted).
var kinds = []string{"tmp", "spill", "old"}

// tempPattern matches the name of any temporary this package names.
var tempPattern = regexp.MustCompile(`^.+\.(` + strings.Join(kinds, "|") + `)-[0-9a-f]{` + fmt.Sprint(suffixLen) + `}$`)

// IsTemp reports whether name (a file name, not a path) is one that TempDir,
// TempFile or AsideName gives.
func IsTemp(name string) bool { return tempPattern.MatchString(name) }

// holder is what a lock file records about the process holding it.
type holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Command string    `json:"command"`
}

func (h holder) String() string {
	s := fmt.Sprintf("pid %d on host %s, since %s", h.PID, h.Host, h.Since.Local().Format("2006-01-02 15:04:05 MST"))
	if h.Command != "" {
		s += fmt.Sprintf(" (%s)", h.Command)
	}
	return s
}

// Lock is the lock of one output. The zero of its file means the file
// system could not lock (see Acquire); such a Lock guards nothing.
type Lock struct {
	output, path string
	shared       bool
	f            *os.File
	made         []string // the folders acquire created for the lock, deepest first
}

// Acquire takes the lock of output without waiting: when another process
// holds it, it returns an error that matches ErrLocked and reads "OUTPUT is
// being written by pid P on host H, since T (COMMAND); …". The
// folder that will hold output is created when missing, and Release
// removes the folders it created while they are empty (the output was
// never made: a command refused leaves nothing behind). Where the file
// system cannot lock (Lustre mounted with noflock, NFS without a lock
// manager), Acquire logs a warning on log (nil: none) and returns a Lock
// that guards nothing, so that work goes on as before locks existed.
func Acquire(output string, log *slog.Logger) (*Lock, error) {
	return acquire(output, false, log)
}

// AcquireShared takes the lock of output shared with other processes that
// take it shared, without waiting: a process that holds it exclusively
// (Acquire) keeps them out, and they keep it out. Each shared holder writes
// only its own part of the output, under a lock of that part. The error
// when refused, and the behaviour where the file system cannot lock, are
// those of Acquire.
func AcquireShared(output string, log *slog.Logger) (*Lock, error) {
	return acquire(output, true, log)
}

func acquire(output string, shared bool, log *slog.Logger) (*Lock, error) {
	// The lock sits beside the output's real path, so that a process that
	// names it through a symbolic link takes the same lock.
	abs, err := Resolve(output)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", output, err)
	}
	dir, base := filepath.Split(abs)
	if base == "" {
		return nil, fmt.Errorf("%s: cannot lock a file system root", output)
	}
	made := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	l := &Lock{output: output, path: filepath.Join(dir, "."+base+".lock"), shared: shared, made: made}
	err = l.lock()
	if errors.Is(err, errUnsupported) {
		os.Remove(l.path)
		if log != nil {
			log.Warn("the file system does not support locks: nothing stops another process from writing this output at the same time", "output", output, "error", err)
		}
		return l, nil
	}
	if err != nil {
		removeEmpty(made)
		return nil, err
	}
	return l, nil
}

// missingDirs returns the folders that os.MkdirAll(dir) would create,
// deepest first.
func missingDirs(dir string) []string {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
			return made
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			return made
		}
	}
}

// removeEmpty removes the folders dirs, deepest first, while they are
// empty.
func removeEmpty(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// lock takes the lock file. The holder removes the file when it releases
// it, so a lock taken on a file that is no longer at l.path (unlinked by
// the releasing holder between our open and our flock) guards nothing: it
// is dropped and taken again on the file now there.
//
// A shared request refused is tried again for a moment before it gives
// up: a holder that is releasing holds the file exclusively while it
// removes it (see Release), and one task of a job array should not fail
// because another ended at that instant.
func (l *Lock) lock() error {
	heldFor := 0
	for range 100 {
		f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return fmt.Errorf("%s: lock: %w", l.output, err)
		}
		err = flock(f, l.shared)
		if errors.Is(err, errHeld) && l.shared && heldFor < sharedPatience {
			f.Close()
			heldFor++
			time.Sleep(sharedRetry)
			continue
		}
		if err != nil {
			defer f.Close()
			if errors.Is(err, errHeld) {
				return l.heldError(f)
			}
			return fmt.Errorf("%s: lock %s: %w", l.output, l.path, err)
		}
		if sameFile(f, l.path) {
			l.f = f
			if l.shared {
				return nil
			}
			return l.record()
		}
		f.Close()
	}
	return fmt.Errorf("%s: lock %s: the lock file keeps changing", l.output, l.path)
}

// A refused shared request is tried sharedPatience more times,
// sharedRetry apart.
const (
	sharedPatience = 10
	sharedRetry    = 50 * time.Millisecond
)

// heldError describes the holders of the lock file f, which refused l.
// Shared holders record nothing, so a refused exclusive request finds out
// whether the holders share the lock by asking for it shared on a second
// descriptor: only an exclusive holder refuses that.
func (l *Lock) heldError(f *os.File) error {
	if !l.shared {
		if probe, err := os.Open(l.path); err == nil {
			shared := sameFile(probe, l.path) && flock(probe, true) == nil
			probe.Close()
			if shared {
				return &lockedError{output: l.output, path: l.path, shared: true}
			}
		}
	}
	return &lockedError{output: l.output, holder: readHolder(f), path: l.path}
}

// sameFile reports whether f is the file now at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// record writes this process's description into the held lock file.
func (l *Lock) record() error {
	host, _ := os.Hostname()
	h := holder{PID: os.Getpid(), Host: host, Since: time.Now().UTC(), Command: command()}
	b, _ := json.Marshal(h)
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("%s: lock %s: %w", l.output, l.path, err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("%s: lock %s: %w", l.output, l.path, err)
	}
	return nil
}

// command is the process's command line, shortened for a message.
func command() string {
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	s := strings.Join(args, " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// readHolder describes the holder recorded in f, or says it is unknown (a
// holder that has not written its record yet, or a foreign file).
func readHolder(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	var h holder
	if err := json.Unmarshal(b[:n], &h); err != nil || h.PID == 0 {
		return "another process"
	}
	return h.String()
}

// Held reports whether l holds its lock (false where the file system could
// not lock).
func (l *Lock) Held() bool { return l != nil && l.f != nil }

// Release removes the lock file and releases the lock. It may be called on
// a nil Lock and more than once. A shared holder removes the file only when
// it is the last holder, which it knows by getting the lock exclusively.
func (l *Lock) Release() error {
	if !l.Held() {
		return nil
	}
	if l.shared && flock(l.f, false) != nil {
		// Others still hold it (the conversion dropped our share).
		err := l.f.Close()
		l.f = nil
		return err
	}
	// Removed while still locked: a process that opened the file before the
	// removal finds, once it holds it, that it is no longer at l.path.
	rerr := os.Remove(l.path)
	cerr := l.f.Close()
	l.f = nil
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("%s: unlock: %w", l.output, rerr)
	}
	removeEmpty(l.made) // the output was not made: a refused command leaves no folder
	return cerr
}

// RemoveStale removes the temporaries beside the output that TempDir,
// TempFile and AsideName name after it: with the lock held, no live process
// writes them. It returns the paths removed, and does nothing when l holds
// no lock or holds it shared (the other holders' temporaries look the
// same).
func (l *Lock) RemoveStale() ([]string, error) {
	if !l.Held() || l.shared {
		return nil, nil
	}
	dir, base := filepath.Split(filepath.Clean(l.output))
	if dir == "" {
		dir = "."
	}
	own := regexp.MustCompile(`^\.?` + regexp.QuoteMeta(base) + `\.(` + strings.Join(kinds, "|") + `)-[0-9a-f]{` + fmt.Sprint(suffixLen) + `}$`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: removing leftovers: %w", l.output, err)
	}
	var removed []string
	for _, e := range entries {
		if own.MatchString(e.Name()) {
			p := filepath.Join(dir, e.Name())
			if err := os.RemoveAll(p); err != nil {
				return removed, fmt.Errorf("%s: removing leftover %s: %w", l.output, p, err)
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// RemoveTempsIn removes every temporary (IsTemp) in dir and its subfolders,
// and returns their paths. Only for a folder that the caller owns outright
// while it holds the folder's lock, such as a run directory.
func RemoveTempsIn(dir string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir || !IsTemp(d.Name()) {
			return nil
		}
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		removed = append(removed, p)
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("%s: removing leftovers: %w", dir, err)
	}
	return removed, nil
}

// TempDir creates a new folder beside output, named BASE.tmp-XXXXXXXXXXXX,
// with mode 0777 less the umask.
func TempDir(output string) (string, error) {
	for range 100 {
		p := tempName(output, "", "tmp")
		err := os.Mkdir(p, 0o777)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: no free temporary name", output)
}

// TempFile creates and opens a new file beside output for reading and
// writing, named .BASE.KIND-XXXXXXXXXXXX (hidden), with mode 0666 less the
// umask. kind is "tmp" or "spill".
func TempFile(output, kind string) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(tempName(output, ".", kind), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: no free temporary name", output)
}

// CommitDir runs fill on a fresh temporary folder beside dir and installs
// it as dir (Install) when fill succeeds; on failure nothing is left
// behind. An existing dir is refused unless force, and then replaced only
// once the new folder is complete. dir is locked meanwhile (a second writer
// fails at once), and the temporaries a killed writer of dir left are
// removed first. fill syncs the files it writes; Install syncs the
// folders. Errors of its own begin with what (the command, such as
// "simulate"); fill's are returned as they are.
func CommitDir(dir, what string, force bool, log *slog.Logger, fill func(tmp string) error) error {
	fail := func(err error) error { return fmt.Errorf("%s: %w", what, err) }
	lk, err := Acquire(dir, log)
	if err != nil {
		return fail(err)
	}
	defer lk.Release()
	if _, err := lk.RemoveStale(); err != nil {
		return fail(err)
	}
	if err := Refuse(dir, force); err != nil {
		return fail(err)
	}
	tmp, err := TempDir(dir)
	if err != nil {
		return fail(err)
	}
	if err := fill(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := Install(tmp, dir, force); err != nil {
		os.RemoveAll(tmp)
		return fail(err)
	}
	return nil
}

// WriteFile creates path, which must not exist, writes it through write
// and syncs it: a file of a folder being filled for Install. The writer
// is the file itself, unbuffered and without its Close; errors name path.
func WriteFile(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	err = write(struct{ io.Writer }{f})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Refuse returns an error saying that output already exists, unless it
// does not or force allows replacing it. Even force does not replace the
// working directory, a folder that holds it, or the home directory: an
// -o of .. or ~ is a slip, and replacing it deletes everything in it.
func Refuse(output string, force bool) error {
	fi, err := os.Lstat(output)
	if err == nil && !force {
		return fmt.Errorf("%s already exists (use --force to replace it)", output)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if err != nil {
		return nil
	}
	// -o /dev/null --force, meant to discard the output, replaced the
	// system's /dev/null with a file or a folder when run as root.
	if m := fi.Mode(); !m.IsRegular() && !m.IsDir() && m&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s is %s, not a file or a folder: --force does not replace it (choose another output)", output, infile.Kind(m))
	}
	out, err := Resolve(output)
	if err != nil {
		return fmt.Errorf("output %s: %w", output, err)
	}
	return refuseResolved(output, out)
}

// refuseResolved refuses out, output resolved, when it is or holds the
// working directory or the home directory.
func refuseResolved(output, out string) error {
	if wd, err := os.Getwd(); err == nil {
		if wd, err = Resolve(wd); err == nil && (out == wd || within(wd, out)) {
			how := map[bool]string{true: "is", false: "holds"}[out == wd]
			return fmt.Errorf("%s %s the working directory: --force does not replace it (choose another output)", output, how)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if home, err = Resolve(home); err == nil && (out == home || within(home, out)) {
			how := map[bool]string{true: "is", false: "holds"}[out == home]
			return fmt.Errorf("%s %s the home directory: --force does not replace it (choose another output)", output, how)
		}
	}
	return nil
}

// Install puts tmp, a complete file or folder written beside output
// (TempDir, TempFile), in output's place, so that output is either what it
// was or all of tmp: the folders in tmp are synced (the writer has synced
// the files it wrote, on its own descriptors, where a write-back error
// shows), tmp is renamed to output, and output's folder is synced. An
// existing output is refused unless force. A file replaces a file in one
// rename, and never a folder; whatever stands where a folder goes is first
// moved aside, under tmp's name with old for its kind when tmp is named
// after some output (so that the lock guarding tmp guards it too, and the
// next holder removes it if this process dies), and removed once tmp is in
// place. tmp is left where it was when Install fails before the rename.
func Install(tmp, output string, force bool) error {
	if err := Refuse(output, force); err != nil {
		return err
	}
	ti, err := os.Lstat(tmp)
	if err != nil {
		return fmt.Errorf("%s: the new output is not where it was written (%w): nothing replaced", output, err)
	}
	if ti.IsDir() {
		if err := syncTree(tmp); err != nil {
			return err
		}
	}
	return install(tmp, ti, output)
}

// tmpName splits the name of a temporary into the output it is named
// after (with the leading dot of a hidden one) and its random digits.
var tmpName = regexp.MustCompile(`^(.+)\.tmp-([0-9a-f]{` + fmt.Sprint(suffixLen) + `})$`)

// asideOf names the place output moves to while tmp replaces it.
func asideOf(tmp, output string) string {
	dir, base := filepath.Split(tmp)
	if m := tmpName.FindStringSubmatch(base); m != nil {
		return filepath.Join(dir, strings.TrimPrefix(m[1], ".")+".old-"+m[2])
	}
	return AsideName(output)
}

// syncTree syncs the entries of dir and of every folder below it.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return Sync(p)
	})
}

// fsync is (*os.File).Sync, replaced by tests that make a sync fail.
var fsync = (*os.File).Sync

// Sync makes path durable: a file's data, or a folder's entries (so that
// files created or renamed in it survive a crash). A file system that
// refuses to sync a folder (EINVAL) is no error.
func Sync(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = fsync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// AsideName returns a fresh name beside output, BASE.old-XXXXXXXXXXXX, to
// move a replaced output to before deleting it.
func AsideName(output string) string { return tempName(output, "", "old") }

func tempName(output, prefix, kind string) string {
	dir, base := filepath.Split(filepath.Clean(output))
	var b [suffixLen / 2]byte
	rand.Read(b[:])
	return filepath.Join(dir, prefix+base+"."+kind+"-"+hex.EncodeToString(b[:]))
}
