//go:build unix

package badgerstore

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentguard/agentguard/ledger"
)

// Tests in this file start the test binary again as a child process that
// runs one of the helpers below, chosen by environment variables.
const (
	envHelper = "AGENTGUARD_LEDGER_HELPER"
	envDir    = "AGENTGUARD_LEDGER_DIR"
)

// child returns a command running helper on dir in a new test process.
func child(t *testing.T, helper, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"="+helper, envDir+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// helperDir returns the directory a helper works on, or skips the test if
// it is not running as a helper.
func helperDir(t *testing.T) string {
	if os.Getenv(envHelper) != t.Name() {
		t.Skip("helper process only")
	}
	return os.Getenv(envDir)
}

// TestCrashHelper appends to a durable ledger from 8 goroutines, writing
// "ack <seq>" to stdout as each Append returns, until it is killed.
func TestCrashHelper(t *testing.T) {
	dir := helperDir(t)
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex // one write(2) per line, lines never interleave
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				seq, err := l.Append(ctx, violation("crash", fmt.Sprintf("w%d-%d", w, i)))
				if err != nil {
					fmt.Println("append:", err)
					os.Exit(2)
				}
				mu.Lock()
				os.Stdout.WriteString("ack " + strconv.FormatUint(seq, 10) + "\n") // unbuffered
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	os.Exit(3) // never killed: the parent gave up
}

// TestCrash kills a process that is appending to a durable ledger and
// checks that every append it acknowledged survived, and that numbering
// resumes above everything stored.
func TestCrash(t *testing.T) {
	dir := t.TempDir()
	cmd := child(t, "TestCrashHelper", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[uint64]bool{}
	var maxAcked uint64
	sc := bufio.NewScanner(out)
	killed := false
	timeout := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer timeout.Stop()
	for sc.Scan() {
		line := sc.Text()
		s, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			t.Logf("child: %s", line)
			continue
		}
		seq, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("child wrote %q", line)
		}
		if acked[seq] {
			t.Errorf("seq %d acknowledged twice", seq)
		}
		acked[seq] = true
		maxAcked = max(maxAcked, seq)
		if !killed && len(acked) == 1500 {
			// Mid-stream: other appends are queued or being synced.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
		// Lines written before the kill are acknowledgements too: read on
		// to the end of the pipe.
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed, after %d acks: %v", len(acked), err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL", err)
	}

	// A read-only open cannot recover the logs the dead process left.
	if _, err := Open(dir, Options{ReadOnly: true}); err == nil || errors.Is(err, ledger.ErrCorrupt) ||
		!strings.Contains(err.Error(), "not closed cleanly") {
		t.Errorf("read-only open of a crashed ledger: %v, want a clear error that is not ledger.ErrCorrupt", err)
	}

	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer l.Close()
	es, err := l.Query(ctx, ledger.Query{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[uint64]bool{}
	var maxStored uint64
	for _, e := range es {
		stored[e.Seq] = true
		maxStored = max(maxStored, e.Seq)
	}
	missing := 0
	for seq := range acked {
		if !stored[seq] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged entries missing after SIGKILL", missing, len(acked))
	}
	seq := mustAppend(t, l, violation("after", "t"))
	if seq <= maxStored || seq <= maxAcked {
		t.Errorf("first seq after the crash = %d, want above %d stored and %d acknowledged", seq, maxStored, maxAcked)
	}
	t.Logf("%d acknowledged (largest %d); %d stored (largest %d; %d more than reported acknowledged); next seq %d",
		len(acked), maxAcked, len(es), maxStored, len(es)-len(acked), seq)
}

// TestLockHelper reports, as "key=value" lines, what a second process gets
// from the ledger directory given to it.
// With AGENTGUARD_LEDGER_READONLY set it only opens the directory
// read-only.
func TestLockHelper(t *testing.T) {
	dir := helperDir(t)
	if os.Getenv("AGENTGUARD_LEDGER_READONLY") == "" {
		l, err := Open(dir, Options{})
		fmt.Printf("open.locked=%v\n", errors.Is(err, ledger.ErrLocked))
		if err == nil {
			_, aerr := l.Append(ctx, violation("from-child", "t"))
			fmt.Printf("append.err=%v\n", aerr)
			l.Close()
		} else {
			fmt.Printf("open.err=%v\n", err)
		}
	}
	r, err := Open(dir, Options{ReadOnly: true})
	fmt.Printf("readonly.locked=%v\n", errors.Is(err, ledger.ErrLocked))
	if err == nil {
		es, qerr := r.Query(ctx, ledger.Query{})
		fmt.Printf("readonly.entries=%d\nreadonly.queryerr=%v\n", len(es), qerr)
		_, aerr := r.Append(ctx, violation("r", "t"))
		fmt.Printf("readonly.appendreadonly=%v\n", errors.Is(aerr, ledger.ErrReadOnly))
		r.Close()
	}
	os.Exit(0)
}

// runLockHelper runs TestLockHelper on dir and returns what it reported.
func runLockHelper(t *testing.T, dir string, readOnly bool) map[string]string {
	t.Helper()
	cmd := child(t, "TestLockHelper", dir)
	if readOnly {
		cmd.Env = append(cmd.Env, "AGENTGUARD_LEDGER_READONLY=1")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	return got
}

// TestLockedAcrossProcesses: while this process holds a ledger, another
// gets ledger.ErrLocked, even read-only; it reads a Snapshot instead; once the
// ledger is closed, the other process may open it.
func TestLockedAcrossProcesses(t *testing.T) {
	dir, snap := t.TempDir(), t.TempDir()
	l, err := Open(dir, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		mustAppend(t, l, violation("r", fmt.Sprint("t", i)))
	}

	got := runLockHelper(t, dir, false)
	if got["open.locked"] != "true" || got["readonly.locked"] != "true" {
		t.Errorf("while held: %v; want open and read-only open both ledger.ErrLocked", got)
	}
	if want := fmt.Sprintf("ledger: open %q: dir is locked by another process", dir); got["open.err"] != want {
		t.Errorf("error = %q, want %q", got["open.err"], want)
	}

	// The copy path: the holder writes a snapshot, the other reads it.
	if err := l.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, violation("r", "after-snapshot"))
	got = runLockHelper(t, snap, true)
	if got["readonly.entries"] != "5" || got["readonly.queryerr"] != "<nil>" || got["readonly.appendreadonly"] != "true" {
		t.Errorf("reading the snapshot: %v; want 5 entries, ledger.ErrReadOnly on append", got)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got = runLockHelper(t, dir, false)
	if got["open.locked"] != "false" || got["append.err"] != "<nil>" || got["readonly.entries"] != "7" {
		t.Errorf("after Close: %v; want open, append and read 7 entries", got)
	}
}
