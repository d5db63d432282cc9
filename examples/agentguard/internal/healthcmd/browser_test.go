package healthcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	htmlpkg "html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReportInBrowser renders the comparison report in headless Chromium
// (Debian's chromium package; .ci/run installs it) and checks that the
// radar chart, its ring labels and the fix directions are in the rendered
// page, that at 1280 and at 390 px (a phone) nothing makes the page wider
// than the window, and that the screenshots at both widths are not blank.
// It skips when no Chromium is installed. AGENTGUARD_SCREENSHOT=DIR keeps
// the screenshots, report-1280.png and report-390.png.
func TestReportInBrowser(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium installed (apt-get install chromium)")
	}
	out := t.TempDir()
	if err := run(context.Background(), options{out: out, repeats: 1}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(out, "report.html")
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync"}
	// chrome runs the browser. A browser that crashes (killed by a signal,
	// or its wrapper script exiting 128+signal: a segfault under load has
	// been seen on CI-like machines) is run again, up to three times, with
	// a fresh profile; one that keeps crashing says nothing of the report,
	// so the test skips, saying why. Any other failure fails the test.
	chrome := func(args ...string) []byte {
		var crash string
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, browser, append(append(flags, "--user-data-dir="+t.TempDir()), args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			var exit *exec.ExitError
			switch {
			case err == nil:
				return stdout.Bytes()
			case errors.As(err, &exit) && (exit.ExitCode() == -1 || exit.ExitCode() >= 128) && ctx.Err() == nil:
				crash = fmt.Sprintf("%v\n%s", err, stderr.String())
				continue
			}
			t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
		}
		t.Skipf("%s crashed three times, which is the browser's fault, not the report's: %s", browser, crash)
		return nil
	}

	dom := string(chrome("--dump-dom", page))
	for _, want := range []string{`<svg class="radar"`, "<polygon", "accuracy", "efficiency", `class="ring"`, "fix direction"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}

	// At a desktop and a phone width, the page must not scroll sideways:
	// wide tables scroll inside their own box. Chromium's windows are at
	// least 500 px wide, so the page is laid out in an iframe of the width
	// under test, and the frame's scroll width is recorded in the DOM
	// Chromium dumps; the screenshots are of the same frames.
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	framed := map[int]string{}
	widthOf := regexp.MustCompile(`data-scroll-width="(\d+)"`)
	for _, width := range []int{1280, 390} {
		framed[width] = filepath.Join(out, fmt.Sprintf("framed-%d.html", width))
		probe := fmt.Sprintf(`<!DOCTYPE html><html><body style="margin:0"><iframe id="f" style="width:%dpx;height:1400px;border:0" srcdoc="%s"></iframe>`+
			`<script>window.addEventListener("load",()=>{document.body.dataset.scrollWidth=document.getElementById("f").contentDocument.documentElement.scrollWidth})</script></body></html>`,
			width, htmlpkg.EscapeString(string(html)))
		if err := os.WriteFile(framed[width], []byte(probe), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := string(chrome("--dump-dom", fmt.Sprintf("--window-size=%d,1400", max(width, 500)), "file://"+framed[width]))
		m := widthOf.FindStringSubmatch(dom)
		if m == nil {
			t.Errorf("width %d: the page did not record its scroll width", width)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got > width {
			t.Errorf("width %d: the page is %d px wide: something overflows its box", width, got)
		}
	}

	for _, width := range []int{1280, 390} {
		shot := filepath.Join(out, fmt.Sprintf("report-%d.png", width))
		if dir := os.Getenv("AGENTGUARD_SCREENSHOT"); dir != "" {
			shot = filepath.Join(dir, filepath.Base(shot))
		}
		chrome("--screenshot="+shot, fmt.Sprintf("--window-size=%d,1400", max(width, 500)), "--hide-scrollbars", "file://"+framed[width])
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		colors := map[uint32]bool{}
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y += 7 {
			for x := b.Min.X; x < b.Max.X; x += 7 {
				r, g, bl, _ := img.At(x, y).RGBA()
				colors[r>>12<<8|g>>12<<4|bl>>12] = true
			}
		}
		if len(colors) < 8 {
			t.Errorf("screenshot %s has %d colours: the page did not render", shot, len(colors))
		}
	}
}
