package badgerstore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
			os.Remove(filler)
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
	// Evidence that does not compress, so that the disk fills soon.
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]trace.Violation, 64)
	for i := range vs {
		vs[i] = violation("r", fmt.Sprint("trace-", i))
		b := make([]byte, 2000)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		vs[i].Evidence = hex.EncodeToString(b)
	}
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
