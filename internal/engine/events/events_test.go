package events

import (
	"errors"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

func TestAnswerPermsLooksUpEachLoginAndFailsClosed(t *testing.T) {
	q := Query{Kind: QPerms, Logins: []string{"maria", "ghost"}, Then: Unmanaged{ID: 7, Author: "maria"}}
	var asked []string
	ev := q.AnswerPerms(func(login string) (access.Level, error) {
		asked = append(asked, login)
		if login == "ghost" {
			return "", errors.New("502 from the permission API")
		}
		return access.Write, nil
	})
	if !reflect.DeepEqual(asked, q.Logins) {
		t.Errorf("looked up %v, want %v", asked, q.Logins)
	}
	u, ok := ev.(Unmanaged)
	if !ok || u.ID != 7 {
		t.Fatalf("answer = %#v, want the asking event again", ev)
	}
	want := map[string]evidence.PermRead{"maria": {Perm: access.Write}, "ghost": {Err: true}}
	if !reflect.DeepEqual(u.Perms, want) {
		t.Errorf("perms = %+v, want %+v", u.Perms, want)
	}
}
