package healthcmd

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportInBrowser renders the comparison report in headless Chromium
// (Debian's chromium package) and checks that the radar chart is in the
// rendered page and the screenshot is not blank. It skips when no
// Chromium is installed. AGENTGUARD_SCREENSHOT=FILE keeps the screenshot.
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
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	chrome := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, browser, append(flags, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
		}
		return stdout.Bytes()
	}

	dom := string(chrome("--dump-dom", page))
	for _, want := range []string{`<svg class="radar"`, "<polygon", "accuracy", "efficiency"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}

	shot := filepath.Join(out, "report.png")
	if keep := os.Getenv("AGENTGUARD_SCREENSHOT"); keep != "" {
		shot = keep
	}
	chrome("--screenshot="+shot, "--window-size=1200,1400", "--hide-scrollbars", page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
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
