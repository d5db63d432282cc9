package cli

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Progress returns the writer a long-running verb reports progress to,
// given its standard error. Progress is written as status lines, each
// replacing the last: "\r" before each, "\n" after the last (the form
// guard/replay's Config.Progress writes); the first "N/M" in a line is how
// far the work has come. On a terminal the line is redrawn in place with a
// bar in front; otherwise a plain line is written each time the work
// passes another tenth, and the last one, so that a log file holds a
// dozen lines, not thousands. Nothing goes to the standard output.
func Progress(stderr io.Writer) io.Writer {
	return newProgress(stderr, IsTerminal(stderr))
}

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, tty: tty, decile: -1}
}

type progress struct {
	w      io.Writer
	tty    bool
	buf    []byte // the status line being written
	last   string // the last status line
	decile int    // the last tenth written as a plain line
	width  int    // of the last line drawn on a terminal
}

var fraction = regexp.MustCompile(`(\d+)/(\d+)`)

func (p *progress) Write(b []byte) (int, error) {
	for _, c := range b {
		switch c {
		case '\r':
			p.status()
		case '\n':
			p.status()
			p.end()
		default:
			p.buf = append(p.buf, c)
		}
	}
	return len(b), nil
}

// status takes the buffered line as the current status.
func (p *progress) status() {
	line := strings.TrimSpace(string(p.buf))
	p.buf = p.buf[:0]
	if line == "" {
		return
	}
	p.last = line
	done, total, ok := parseFraction(line)
	if p.tty {
		s := line
		if ok && total > 0 {
			const width = 20
			n := min(width, done*width/total)
			s = "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "] " + line
		}
		pad := max(0, p.width-len(s))
		p.width = len(s)
		fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", pad))
		return
	}
	if !ok || total <= 0 {
		return // written at the end
	}
	if d := done * 10 / total; d > p.decile {
		p.decile = d
		fmt.Fprintln(p.w, line)
		if done >= total {
			p.last = ""
		}
	}
}

// end ends a run of status lines.
func (p *progress) end() {
	switch {
	case p.tty:
		if p.width > 0 {
			fmt.Fprintln(p.w)
		}
	case p.last != "":
		fmt.Fprintln(p.w, p.last)
	}
	p.last, p.decile, p.width = "", -1, 0
}

func parseFraction(s string) (done, total int, ok bool) {
	m := fraction.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	done, err1 := strconv.Atoi(m[1])
	total, err2 := strconv.Atoi(m[2])
	return done, total, err1 == nil && err2 == nil
}
