package servertest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// OwnRedis is a redis-server of one test's own (on a free port, its data in
// a temporary directory) that persists every write to its append-only file
// before answering (appendonly yes, appendfsync always), as docs/app.md
// requires of the work queue's Redis. Kill and Start play a crash and a
// restart from that file.
type OwnRedis struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	// fsync is the appendfsync policy: "always" unless started with
	// StartOwnRedisFsync.
	fsync string
}

// StartOwnRedis starts one. Without redis-server on PATH the test is
// skipped, saying so, whatever CI says (see RedisURL).
func StartOwnRedis(tb testing.TB) *OwnRedis {
	tb.Helper()
	return StartOwnRedisFsync(tb, "always")
}

// StartOwnRedisFsync starts one with appendfsync policy ("always",
// "everysec" or "no"): a benchmark compares the durable setting with one
// that does not sync each write, to tell the disk's share of a cost from
// the code's. Only "always" is what docs/app.md asks of the work queue.
func StartOwnRedisFsync(tb testing.TB, policy string) *OwnRedis {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip(redisServerMissing)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &OwnRedis{tb: tb, bin: bin, dir: tb.TempDir(), port: port, fsync: policy}
	r.Start()
	tb.Cleanup(r.Kill)
	return r
}

// URL is the redis:// URL of the server.
func (r *OwnRedis) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// Start runs the server (reading back its append-only file) and waits
// until it answers PING.
func (r *OwnRedis) Start() {
	r.tb.Helper()
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", r.fsync, "--save", "")
	if err := r.cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	for range 200 {
		if r.ping() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	r.tb.Fatal("own redis-server did not answer within 5s")
}

// ping sends PING in the inline protocol and reads +PONG.
func (r *OwnRedis) ping() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), 100*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Kill stops the server with SIGKILL: no shutdown, no final write.
func (r *OwnRedis) Kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// CPUTime is the CPU time the server has used so far (user and system),
// read from /proc (Linux; 0 elsewhere), so a benchmark can add Redis's
// share to its own.
func (r *OwnRedis) CPUTime() time.Duration {
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which ends with the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}
