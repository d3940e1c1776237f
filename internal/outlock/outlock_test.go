package outlock

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"scpipe/internal/testkit"
)

// holdEnv makes the test binary a process that takes the lock of the
// output it names, says so on stdout and waits to be killed.
const holdEnv = "OUTLOCK_TEST_HOLD"

// heldLock keeps the child's lock reachable while it waits to be killed.
var heldLock *Lock

func TestMain(m *testing.M) {
	if out := os.Getenv(holdEnv); out != "" {
		l, err := Acquire(out, nil)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		// Held in a package variable: a lock no one refers to may be
		// collected, and its file's finalizer closes the descriptor and
		// with it the lock (the test failed about once in 200 runs).
		heldLock = l
		select {}
	}
	os.Exit(m.Run())
}

func TestLockInProcess(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "shards")
	a, err := Acquire(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Held() {
		t.Fatal("lock not held on a local file system")
	}
	host, _ := os.Hostname()
	_, err = Acquire(out, nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d on host %s", os.Getpid(), host)) {
		t.Fatalf("second Acquire: %v (want ErrLocked naming pid %d and host %s)", err, os.Getpid(), host)
	}
	// Another output in the same folder is not locked.
	b, err := Acquire(out+"2", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if _, err := os.Stat(a.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after Release: %v", err)
	}
	c, err := Acquire(out, nil)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	c.Release()
}

// TestLockAcrossProcesses holds the lock in a child process: another
// process is refused with the child's pid while it lives, and gets the lock
// once the child is killed with SIGKILL, which leaves the lock file behind.
func TestLockAcrossProcesses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), holdEnv+"="+out)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	_, err = Acquire(out, nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", child.Process.Pid)) {
		t.Fatalf("Acquire while the child holds the lock: %v (want the child's pid %d)", err, child.Process.Pid)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	l, err := Acquire(out, nil)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer l.Release()
	if !l.Held() {
		t.Fatal("lock not held")
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "shards")
	const hex = "0123456789ab"
	own := []string{"shards.tmp-" + hex, ".shards.spill-" + hex, "shards.old-" + hex, ".shards.tmp-" + hex}
	others := []string{"shards", "shards.tmp-xyz", "shards.tmp-0123456789abc", "shards2.tmp-" + hex, "other.old-" + hex, ".shards.lock.tmp"}
	for _, n := range append(slices.Clone(own), others...) {
		p := filepath.Join(dir, n)
		if strings.Contains(n, "tmp-") && !strings.HasPrefix(n, ".") {
			if err := os.MkdirAll(filepath.Join(p, "inside"), 0o777); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// Without the lock nothing is removed.
	var none *Lock
	if removed, err := none.RemoveStale(); err != nil || len(removed) != 0 {
		t.Fatalf("RemoveStale without the lock: %v, %v", removed, err)
	}
	l, err := Acquire(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	removed, err := l.RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(own) {
		t.Errorf("removed %v, want %v", removed, own)
	}
	for _, n := range own {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s not removed", n)
		}
	}
	for _, n := range others {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed: %v", n, err)
		}
	}
}

func TestRemoveTempsIn(t *testing.T) {
	run := t.TempDir()
	keep := []string{"config.toml", "L02/chain1/state.ckpt", "fitmask/x0.bin"}
	temps := []string{".config.toml.tmp-00000000000a", "L02/chain1/.state.ckpt.tmp-aaaaaaaaaaaa", "L02/chain1/.trace.parquet.tmp-bbbbbbbbbbbb", "fitmask.tmp-cccccccccccc/x0.bin"}
	for _, n := range append(slices.Clone(keep), temps...) {
		p := filepath.Join(run, n)
		os.MkdirAll(filepath.Dir(p), 0o777)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveTempsIn(run)
	if err != nil || len(removed) != len(temps) {
		t.Fatalf("removed %v, %v; want the %d temporaries", removed, err, len(temps))
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(run, n)); err != nil {
			t.Error(err)
		}
	}
	for _, n := range temps {
		if _, err := os.Stat(filepath.Join(run, filepath.Dir(n))); strings.HasPrefix(n, "fitmask.tmp") && err == nil {
			t.Errorf("%s left", filepath.Dir(n))
		}
		if _, err := os.Stat(filepath.Join(run, n)); err == nil {
			t.Errorf("%s left", n)
		}
	}
}

// TestModesFollowUmask: temporaries (and so the outputs renamed from them)
// and lock files get 0777 and 0666 less the umask, not a fixed mode.
func TestModesFollowUmask(t *testing.T) {
	for _, mask := range []int{0o002, 0o027, 0o077} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		d, err := TempDir(out)
		if err != nil {
			t.Fatal(err)
		}
		f, err := TempFile(out, "tmp")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		l, err := Acquire(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		lockMode := testkit.Mode(t, l.path)
		l.Release()
		syscall.Umask(old)
		if got, want := testkit.Mode(t, d), os.FileMode(0o777&^mask); got != want {
			t.Errorf("umask %03o: folder mode %03o, want %03o", mask, got, want)
		}
		if got, want := testkit.Mode(t, f.Name()), os.FileMode(0o666&^mask); got != want {
			t.Errorf("umask %03o: file mode %03o, want %03o", mask, got, want)
		}
		if want := os.FileMode(0o666 &^ mask); lockMode != want {
			t.Errorf("umask %03o: lock file mode %03o, want %03o", mask, lockMode, want)
		}
		if !IsTemp(filepath.Base(d)) || !IsTemp(filepath.Base(f.Name())) || !IsTemp(filepath.Base(AsideName(out))) {
			t.Errorf("IsTemp refuses %s, %s or %s", d, f.Name(), AsideName(out))
		}
	}
}

// TestSharedLock: shared holders coexist and keep an exclusive request out
// with a message saying the lock is shared; the last of them to release
// removes the file; an exclusive holder keeps shared requests out with its
// own name; a shared holder removes no temporaries.
func TestSharedLock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	a, err := AcquireShared(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := AcquireShared(out, nil)
	if err != nil {
		t.Fatalf("second shared holder: %v", err)
	}
	if !a.Held() || !b.Held() {
		t.Fatal("shared locks not held")
	}
	stale := filepath.Join(filepath.Dir(out), "run.tmp-0123456789ab")
	if err := os.Mkdir(stale, 0o777); err != nil {
		t.Fatal(err)
	}
	if removed, err := a.RemoveStale(); err != nil || len(removed) != 0 {
		t.Errorf("a shared holder removed %v, %v", removed, err)
	}
	for _, held := range []string{"both", "one"} {
		_, err = Acquire(out, nil)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "processes that share it") || !strings.Contains(err.Error(), out) {
			t.Errorf("exclusive request while %s shared holders hold the lock: %v", held, err)
		}
		if err := a.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(a.path); held == "both" && err != nil {
			t.Errorf("the first shared holder to release removed the lock file: %v", err)
		}
		a = b
	}
	if _, err := os.Stat(a.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after the last shared holder released it: %v", err)
	}

	x, err := Acquire(out, nil)
	if err != nil {
		t.Fatalf("exclusive request after the shared holders left: %v", err)
	}
	defer x.Release()
	_, err = AcquireShared(out, nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Errorf("shared request while an exclusive holder holds the lock: %v (want its pid)", err)
	}
}

// TestCommitDir checks that an output is refused without force, replaced
// with it, and that a failing fill leaves the old output and nothing else.
func TestCommitDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	write := func(content string) func(string) error {
		return func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o666) }
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name, content string
		force         bool
		fill          func(string) error
		wantErr       string
		want          string
	}{
		{"new", "1", false, write("1"), "", "1"},
		{"exists", "2", false, write("2"), "already exists (use --force", "1"},
		{"forced", "3", true, write("3"), "", "3"},
		{"fill fails", "4", true, func(string) error { return boom }, "boom", "3"},
	} {
		err := CommitDir(dir, "test", tc.force, slog.New(slog.DiscardHandler), tc.fill)
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != tc.want {
			t.Errorf("%s: output holds %q, want %q", tc.name, got, tc.want)
		}
		if left, _ := os.ReadDir(filepath.Dir(dir)); len(left) != 1 { // the lock goes with its release
			t.Errorf("%s: %d entries where the output is, want the output alone", tc.name, len(left))
		}
	}
}

// TestCommitDirLeftovers checks that CommitDir removes what a killed
// writer of the same output left beside it (its temporary folder, a hidden
// temporary file and an old copy moved aside) and nothing else.
func TestCommitDirLeftovers(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	tmp, err := TempDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := TempFile(dir, "tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	aside := AsideName(dir)
	other, err := TempDir(filepath.Join(parent, "other")) // another output's: not ours to remove
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tmp, aside} {
		os.MkdirAll(p, 0o777)
	}
	if err := CommitDir(dir, "test", false, nil, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tmp, f.Name(), aside} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after CommitDir (%v)", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another output's temporary removed: %v", err)
	}
}

// TestCommitDirLocked checks that CommitDir refuses an output whose lock
// another writer holds, and fills nothing.
func TestCommitDirLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	lk, err := Acquire(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	filled := false
	err = CommitDir(dir, "test", true, nil, func(string) error { filled = true; return nil })
	if !errors.Is(err, ErrLocked) || filled {
		t.Errorf("CommitDir on a locked output: err = %v, filled = %v (want ErrLocked, nothing filled)", err, filled)
	}
}

// TestInstallSyncError checks that a failed sync, of the new folder or of
// the folder it lands in, fails the commit.
func TestInstallSyncError(t *testing.T) {
	boom := errors.New("I/O error")
	for _, failAt := range []int{1, 2, 3} { // the new folder, its subfolder, the parent (after the rename)
		t.Run(fmt.Sprint(failAt), func(t *testing.T) {
			calls := 0
			fsync = func(f *os.File) error {
				if calls++; calls == failAt {
					return boom
				}
				return nil
			}
			defer func() { fsync = (*os.File).Sync }()
			dir := filepath.Join(t.TempDir(), "out")
			err := CommitDir(dir, "test", false, nil, func(tmp string) error { return os.Mkdir(filepath.Join(tmp, "sub"), 0o777) })
			if !errors.Is(err, boom) {
				t.Fatalf("CommitDir with sync %d failing: %v, want the sync's error", failAt, err)
			}
			if left, _ := os.ReadDir(filepath.Dir(dir)); failAt < 3 && len(left) != 0 {
				t.Errorf("left %d entries after a failed commit, want none", len(left))
			}
		})
	}
}

// TestInstallFile checks that a file replaces a file in place, that a
// folder replaces a file (moved aside under the temporary's name, then
// removed), and that a file does not replace a folder.
func TestInstallFile(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := os.WriteFile(out, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	f, err := TempFile(out, "tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if err := Install(f.Name(), out, false); err == nil {
		t.Fatal("Install replaced an output without force")
	}
	if err := Install(f.Name(), out, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "new" {
		t.Errorf("output holds %q, want new", b)
	}
	tmp, err := TempDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(tmp, out, true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		t.Errorf("output after installing a folder over a file: %v, %v", fi, err)
	}
	g, err := TempFile(out, "tmp")
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if err := Install(g.Name(), out, true); err == nil {
		t.Error("a file replaced a folder")
	}
	os.Remove(g.Name())
	if left, _ := os.ReadDir(parent); len(left) != 1 {
		t.Errorf("%d entries beside the output, want none", len(left)-1)
	}
}

// TestRefuseWorkingAndHome: --force never replaces the folder a command
// runs in, one that holds it, or the home directory (scpipe simulate -o ..
// --force, or -o ~ --force, once deleted them), whatever else it replaces.
func TestRefuseWorkingAndHome(t *testing.T) {
	dir := t.TempDir()
	cwd, home, other := filepath.Join(dir, "a", "b"), filepath.Join(dir, "home"), filepath.Join(dir, "other")
	for _, d := range []string{cwd, home, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(cwd)
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name, output string
		force        bool
		want         string // "": no error
	}{
		{"another folder", other, true, ""},
		{"another folder without --force", other, false, "already exists (use --force"},
		{"the working directory", ".", true, "is the working directory"},
		{"a folder holding it", "..", true, "holds the working directory"},
		{"the same by its absolute path", filepath.Join(dir, "a"), true, "holds the working directory"},
		{"the home directory", home, true, "is the home directory"},
		{"a folder holding both", dir, true, "holds the working directory"},
		{"a new folder", filepath.Join(other, "new"), true, ""},
	} {
		err := Refuse(tc.output, tc.force)
		if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%s: Refuse(%s, %v) = %v, want %q", tc.name, tc.output, tc.force, err, tc.want)
		}
	}
}

// TestRefuseSpecialFiles: --force replaces a file, a folder or a link, and
// never a named pipe or a device: -o /dev/null --force, meant to discard
// an output, replaced the system's /dev/null when run as root. (A named
// pipe stands in for the device here, which a test must not risk.)
func TestRefuseSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	for _, force := range []bool{false, true} {
		err := Refuse(fifo, force)
		want := map[bool]string{false: "already exists", true: fifo + " is a named pipe, not a file or a folder: --force does not replace it"}[force]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Refuse(a named pipe, force %v): %v, want %q", force, err, want)
		}
	}
	tmp, err := TempDir(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(tmp, fifo, true); err == nil {
		t.Errorf("Install over a named pipe with force: no error")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v %v", fi.Mode(), err)
	}
	for _, p := range []string{filepath.Join(dir, "file"), filepath.Join(dir, "folder")} {
		if strings.HasSuffix(p, "folder") {
			err = os.Mkdir(p, 0o777)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := Refuse(p, true); err != nil {
			t.Errorf("Refuse(%s, force): %v", p, err)
		}
	}
}

// TestReleaseRemovesMadeFolders: the folders Acquire made for a lock go
// again on Release while they are empty (a command refused leaves none);
// those that held something before, or now hold the output, stay.
func TestReleaseRemovesMadeFolders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  bool     // the output is made under the lock
		shared bool     // the lock is shared
		left   []string // what stays below the test's folder
	}{
		{"refused", false, false, nil},
		{"refused, shared", false, true, nil},
		{"written", true, false, []string{"a", "a/b", "a/b/out"}},
	} {
		root := t.TempDir()
		out := filepath.Join(root, "a", "b", "out")
		acquire := Acquire
		if tc.shared {
			acquire = AcquireShared
		}
		l, err := acquire(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.write {
			if err := os.WriteFile(out, []byte("x"), 0o666); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		var left []string
		filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error {
			if r, _ := filepath.Rel(root, p); r != "." {
				left = append(left, filepath.ToSlash(r))
			}
			return nil
		})
		if !slices.Equal(left, tc.left) {
			t.Errorf("%s: left %q, want %q", tc.name, left, tc.left)
		}
	}
}
