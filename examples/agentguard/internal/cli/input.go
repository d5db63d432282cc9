package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
)

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// Input is an input file opened by OpenInput.
type Input struct {
	io.Reader
	// Name names the input in messages: the file name, or "stdin".
	Name   string
	closer []io.Closer
}

// Close closes the file (not the standard input).
func (in *Input) Close() error {
	var err error
	for i := len(in.closer) - 1; i >= 0; i-- {
		if cerr := in.closer[i].Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// OpenInput opens a verb's input: the file name names, or Stdin(ctx) for
// "-". A gzip stream (told by its first bytes, whatever the name) is
// decompressed as it is read.
func OpenInput(ctx context.Context, name string) (*Input, error) {
	in := &Input{Name: name}
	var r io.Reader
	if name == "-" {
		in.Name, r = "stdin", Stdin(ctx)
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		in.closer = append(in.closer, f)
		r = f
	}
	br := bufio.NewReaderSize(r, 64<<10)
	in.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		in.closer = append(in.closer, zr)
		in.Reader = zr
	}
	return in, nil
}
