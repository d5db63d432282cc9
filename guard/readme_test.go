package guard_test

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// updateReadme replaces the text between the markers <!-- name:begin -->
// and <!-- name:end --> of the README at path with region, so that the
// figures the README quotes are the ones a test here produced. Without the
// markers it changes nothing.
func updateReadme(t *testing.T, path, name, region string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Logf("%s: not found; the %s region is not written", path, name)
		return
	} else if err != nil {
		t.Fatal(err)
	}
	beginMark, endMark := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	begin, end := bytes.Index(old, []byte(beginMark)), bytes.Index(old, []byte(endMark))
	if begin < 0 || end < begin {
		t.Logf("%s has no %s … %s region; it is not written there", path, beginMark, endMark)
		return
	}
	var b bytes.Buffer
	b.Write(old[:begin+len(beginMark)])
	b.WriteString("\n" + region)
	b.Write(old[end:])
	if bytes.Equal(b.Bytes(), old) {
		return
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote the %s region of %s", name, path)
}

// TestReadmeProgramIsTheExample holds the README's complete program to
// Example_program, which go test compiles and runs: the program's main is
// the example's body, it imports what the example imports, and the README
// shows what the example prints.
func TestReadmeProgramIsTheExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Skipf("README.md not readable (%v): nothing to hold to the example", err)
	}
	const open = "```go\npackage main\n"
	i := bytes.Index(readme, []byte(open))
	if i < 0 {
		t.Fatal("README.md has no complete program (a ```go block starting with package main)")
	}
	j := bytes.Index(readme[i+len(open):], []byte("\n```"))
	if j < 0 {
		t.Fatal("README.md: the program's code block is not closed")
	}
	program := string(readme[i+len("```go\n") : i+len(open)+j+1])
	example, err := os.ReadFile("program_example_test.go")
	if err != nil {
		t.Fatal(err)
	}

	got, want := body(t, program, "func main() {\n", "\n}\n"), body(t, string(example), "func Example_program() {\n", "\n\t// Output:")
	if got != want {
		t.Errorf("the README's main is not Example_program's body; copy program_example_test.go's body into the README.\nREADME:\n%s\nexample:\n%s", got, want)
	}
	var output strings.Builder
	for line := range strings.Lines(body(t, string(example), "\t// Output:\n", "\n}")) {
		output.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "\t//"), " "))
	}
	if got, want := body(t, string(readme), "It prints:\n\n```\n", "```"), output.String()+"\n"; got != want {
		t.Errorf("the README says the program prints\n%s\nExample_program prints\n%s", got, want)
	}
	if got, want := imports(t, "README.md", program), imports(t, "program_example_test.go", string(example)); !slices.Equal(got, want) {
		t.Errorf("the README's program imports %q, the example %q", got, want)
	}
}

// body returns the text of src from after open to before the first close
// that follows it.
func body(t *testing.T, src, open, close string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, open)
	if !ok {
		t.Fatalf("no %q in %.80q…", open, src)
	}
	b, _, ok := strings.Cut(rest, close)
	if !ok {
		t.Fatalf("no %q after %q", close, open)
	}
	return b
}

// imports parses src as a Go file and returns its import paths, sorted.
func imports(t *testing.T, name, src string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("%s does not parse: %v", name, err)
	}
	var paths []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}
