package redisurl

import (
	"strings"
	"testing"
	"time"
)

func TestDialFillsUnsetTimeoutsAndKeepsTheURLs(t *testing.T) {
	c, err := Dial("redis://127.0.0.1:1/0?read_timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.Options()
	if o.DialTimeout != time.Second || o.WriteTimeout != time.Second || o.PoolTimeout != time.Second {
		t.Errorf("unset timeouts: dial %v write %v pool %v, want 1s each", o.DialTimeout, o.WriteTimeout, o.PoolTimeout)
	}
	if o.ReadTimeout != 5*time.Second {
		t.Errorf("read timeout %v, want the URL's 5s", o.ReadTimeout)
	}
	if !o.ContextTimeoutEnabled {
		t.Error("the caller's context deadline is not honoured")
	}
}

func TestDialNamesTheSettingOfABadURL(t *testing.T) {
	_, err := Dial("localhost:6379")
	if err == nil || !strings.HasPrefix(err.Error(), "REDIS_URL: ") {
		t.Fatalf("err %v, want one naming REDIS_URL", err)
	}
}
