package reliability

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
)

// inMemory is an http.RoundTripper that serves requests with a handler in
// the same process, skipping the loopback network (the suite makes tens of
// thousands of requests). A handler that hijacks the connection to drop it
// (a "response lost" fault) or aborts makes RoundTrip fail the way a
// closed connection does.
type inMemory struct{ h http.Handler }

// errConnClosed is what a client sees when the server closes the
// connection without an answer.
var errConnClosed = fmt.Errorf("server closed the connection: %w", io.ErrUnexpectedEOF)

func (m inMemory) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	srvReq := req.Clone(req.Context())
	if req.Body == nil {
		srvReq.Body = http.NoBody
	}
	srvReq.RequestURI = req.URL.RequestURI()
	srvReq.RemoteAddr = "127.0.0.1:1"
	w := &memWriter{header: http.Header{}}
	aborted := false
	func() {
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					panic(p)
				}
				aborted = true
			}
		}()
		m.h.ServeHTTP(w, srvReq)
	}()
	if aborted || w.hijacked {
		return nil, errConnClosed
	}
	if err := req.Context().Err(); err != nil && w.status == 0 {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// memWriter is the handler's side of an in-memory exchange.
type memWriter struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (w *memWriter) Header() http.Header { return w.header }

func (w *memWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *memWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// Hijack hands the handler a connection that goes nowhere; the client
// side of RoundTrip then reports the connection closed.
func (w *memWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, errors.New("already hijacked")
	}
	w.hijacked = true
	a, b := net.Pipe()
	_ = b.Close()
	return a, bufio.NewReadWriter(bufio.NewReader(a), bufio.NewWriter(io.Discard)), nil
}
