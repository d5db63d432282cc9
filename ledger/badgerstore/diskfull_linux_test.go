package badgerstore

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
	"github.com/agentguard/agentguard/trace"
)

// TestDiskFullTmpfs fills a real 96 MiB tmpfs with a ledger in child
// processes: appends stop with ErrDiskFull, no process dies of SIGBUS,
// Open on the full disk fails cleanly, and once space is freed every
// acknowledged entry is there and appends go on. It needs the privilege
// to mount a tmpfs, and skips without it.
func TestDiskFullTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a tmpfs")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=96m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): run as root to test a full disk", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	dir := filepath.Join(mnt, "ledger")

	run := func(helper string) (string, error) {
		cmd := child(t, helper, dir)
		out, err := cmd.Output()
		line, _, _ := strings.Cut(string(out), "\n") // then the child's PASS
		return line, err
	}
	for _, mode := range []string{"default", "durable"} {
		t.Run(mode, func(t *testing.T) {
			os.RemoveAll(dir)
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=96m,mode=0700"); err != nil {
				t.Fatal(err)
			}
			os.Setenv("AGENTGUARD_LEDGER_MODE", mode)
			defer os.Unsetenv("AGENTGUARD_LEDGER_MODE")
			out, err := run("TestDiskFullHelper")
			var acked int
			if _, serr := fmt.Sscanf(out, "full after %d", &acked); err != nil || serr != nil || acked == 0 {
				t.Fatalf("filling child: %q, %v (a signal here is the crash this test is about)", out, err)
			}
			t.Logf("%s: %d entries acknowledged before ErrDiskFull", mode, acked)

			// Leave less than the reserve free: Open fails cleanly.
			filler := filepath.Join(mnt, "filler")
			var st syscall.Statfs_t
			if err := syscall.Statfs(mnt, &st); err != nil {
				t.Fatal(err)
			}
			free := int64(st.Bavail) * int64(st.Bsize)
			if err := os.WriteFile(filler, make([]byte, max(free-8<<20, 0)), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := run("TestDiskFullOpenHelper"); err != nil || out != "open: disk full" {
				t.Errorf("Open on a full disk: %q, %v", out, err)
			}
			// Free space for real: the filler only took the disk back to
			// where the ledger stopped, a few kilobytes either side of the
			// reserve (what Close and Open write decides which), so the
			// tmpfs also grows by 32 MiB.
			os.Remove(filler)
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=128m,mode=0700"); err != nil {
				t.Fatal(err)
			}
			if out, err := run("TestDiskFullCountHelper"); err != nil || out != fmt.Sprintf("entries %d, append ok", acked) {
				t.Errorf("after freeing space: %q, %v; want %d entries and an append", out, err, acked)
			}
		})
	}
}

func helperOpts() Options {
	o := Options{Durable: os.Getenv("AGENTGUARD_LEDGER_MODE") == "durable"}
	if os.Getenv("AGENTGUARD_LEDGER_MODE") == "no-reserve" { // to see the crash by hand
		o.DiskReserve = -1
	}
	return o
}

// TestDiskFullHelper appends batches of 64 entries of 4 KB until the ledger
// refuses, and prints how many were acknowledged.
func TestDiskFullHelper(t *testing.T) {
	dir := helperDir(t)
	l, err := Open(dir, helperOpts())
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	vs := incompressible(64)
	acked := 0
	for {
		seqs, err := l.AppendBatch(ctx, vs)
		if errors.Is(err, ledger.ErrDiskFull) {
			break
		} else if err != nil {
			fmt.Println("append:", err)
			os.Exit(2)
		}
		acked += len(seqs)
	}
	if err := l.Close(); err != nil {
		fmt.Println("close:", err)
		os.Exit(2)
	}
	fmt.Println("full after", acked)
}

func TestDiskFullOpenHelper(t *testing.T) {
	dir := helperDir(t)
	l, err := Open(dir, helperOpts())
	if errors.Is(err, ledger.ErrDiskFull) {
		fmt.Println("open: disk full")
		return
	}
	fmt.Println("open:", err)
	if l != nil {
		l.Close()
	}
}

func TestDiskFullCountHelper(t *testing.T) {
	dir := helperDir(t)
	l, err := Open(dir, helperOpts())
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	defer l.Close()
	n := 0
	for _, err := range l.Entries(ctx, ledger.Query{}) {
		if err != nil {
			fmt.Println("query:", err)
			os.Exit(2)
		}
		n++
	}
	_, err = l.Append(ctx, violation("r", "after"))
	fmt.Printf("entries %d, append %s\n", n, map[bool]string{true: "ok", false: fmt.Sprint(err)}[err == nil])
}

// TestExternalDiskFill is the fault another process brings about: while
// a ledger appends, a filler takes every free byte of its disk (a 96 MiB
// tmpfs), holds it, and gives it back. The ledger must refuse appends with
// ErrDiskFull while the disk is full and take them again after, keep every
// entry it acknowledged, and never die writing a memtable log (badger
// writes them through memory maps: a write there on a full disk is a
// SIGBUS; the ledger allocates them ahead). A table that badger's flush or
// compaction writes at the moment the last byte goes still faults — only
// badger can allocate it before mapping it — and is counted, not failed
// (see "Full disk" in the package documentation). Runs
// AGENTGUARD_FILL_RUNS times per mode (default 20; 3 with -short).
func TestExternalDiskFill(t *testing.T) {
	oneGoroutine(t)
	runs := 20
	if testing.Short() {
		runs = 3
	}
	if n, err := strconv.Atoi(os.Getenv("AGENTGUARD_FILL_RUNS")); err == nil {
		runs = n
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=96m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): run as root to test a disk another process fills", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	dir := filepath.Join(mnt, "ledger")
	for _, mode := range []string{"default", "durable"} {
		tableFaults := 0
		for run := range runs {
			os.RemoveAll(dir)
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=96m,mode=0700"); err != nil {
				t.Fatal(err)
			}
			os.Setenv("AGENTGUARD_LEDGER_MODE", mode)
			cmd := child(t, "TestExternalFillHelper", dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			lines.Scan() // "appending": the ledger is open and writing
			time.Sleep(time.Duration(50+run*37%200) * time.Millisecond)
			filler := filepath.Join(mnt, "filler")
			fill(t, filler)
			time.Sleep(300 * time.Millisecond) // the disk stays full a while
			os.Remove(filler)
			var last string
			for lines.Scan() {
				if l := lines.Text(); last == "" || !strings.HasPrefix(last, "acked ") {
					last = l
				}
			}
			err = cmd.Wait()
			os.Unsetenv("AGENTGUARD_LEDGER_MODE")
			var acked, refused int
			var resumed bool
			if _, serr := fmt.Sscanf(last, "acked %d refused %d resumed %t", &acked, &refused, &resumed); err != nil || serr != nil {
				if faulted := strings.Contains(stderr.String(), "SIGBUS"); faulted && strings.Contains(stderr.String(), "badger/v4/table.") {
					tableFaults++ // badger's own table write: see the test's comment
					continue
				}
				t.Errorf("%s run %d: child ended with %v after %q:\n%s", mode, run, err, last, tail(stderr.String(), 4000))
				continue
			}
			if refused > 0 && !resumed {
				t.Errorf("%s run %d: appends were refused while the disk was full and not taken again after", mode, run)
			}
			out, err := child(t, "TestDiskFullCountHelper", dir).Output()
			line, _, _ := strings.Cut(string(out), "\n")
			var n int
			if _, serr := fmt.Sscanf(line, "entries %d, append", &n); err != nil || serr != nil || n < acked {
				t.Errorf("%s run %d: %d acknowledged, then %q (%v)", mode, run, acked, line, err)
			}
			if run == 0 {
				t.Logf("%s: %d entries acknowledged, %d appends refused while the disk was full", mode, acked, refused)
			}
		}
		t.Logf("%s: %d of %d runs died in a table badger was writing when the disk filled; none in a memtable log", mode, tableFaults, runs)
	}
}

// fill writes path until the disk it is on is full, as dd would.
func fill(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			for _, n := range []int{64 << 10, 4 << 10, 512} { // the last bytes too
				for {
					if _, err := f.Write(buf[:n]); err != nil {
						break
					}
				}
			}
			return
		}
	}
}

// TestExternalFillHelper appends batches of 8 entries of 4 KB, as a busy
// agent's guard does, printing "appending" once open; when the disk fills
// it keeps trying every 10 ms, as the agent goes on, until appends are
// taken again, then appends 8 batches more and prints what it
// acknowledged and how many appends were refused.
func TestExternalFillHelper(t *testing.T) {
	dir := helperDir(t)
	l, err := Open(dir, helperOpts())
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	vs := incompressible(8)
	fmt.Println("appending")
	acked, refused, after := 0, 0, -1
	deadline := time.Now().Add(20 * time.Second)
	for after != 0 && time.Now().Before(deadline) {
		seqs, err := l.AppendBatch(ctx, vs)
		switch {
		case errors.Is(err, ledger.ErrDiskFull):
			refused++
			if after < 0 {
				after = 8
			}
			time.Sleep(10 * time.Millisecond)
			continue
		case err != nil:
			fmt.Println("append:", err)
			os.Exit(2)
		}
		acked += len(seqs)
		if refused > 0 {
			after--
		}
	}
	if err := l.Close(); err != nil {
		fmt.Println("close:", err)
		os.Exit(2)
	}
	fmt.Printf("acked %d refused %d resumed %t\n", acked, refused, after == 0)
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// incompressible is a batch of n violations of about 4 KB each whose
// evidence does not compress, so that a disk fills soon.
func incompressible(n int) []trace.Violation {
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]trace.Violation, n)
	for i := range vs {
		vs[i] = violation("r", fmt.Sprint("trace-", i))
		b := make([]byte, 2000)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		vs[i].Evidence = hex.EncodeToString(b)
	}
	return vs
}
