package fakegithub

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An App's webhook delivery log, as GET /app/hook/deliveries lists it and
// POST /app/hook/deliveries/{id}/attempts redelivers from it. The fake
// delivers nothing itself: tests record the attempts (RecordDelivery), and
// say what a redelivery's attempt answers (RedeliverWith).

// redeliveryWindow is how old a delivery GitHub still redelivers.
const redeliveryWindow = 72 * time.Hour

// HookDelivery is one attempt to deliver an App's webhook.
type HookDelivery struct {
	// ID is the attempt's id (set by RecordDelivery).
	ID int64
	// AppID is the App whose webhook it was (required).
	AppID int64
	// GUID is the X-GitHub-Delivery value, shared by every attempt of one
	// event; RecordDelivery makes one up when empty.
	GUID string
	// Event and Action name what was delivered ("issues", "labeled").
	Event, Action string
	// StatusCode is the App server's answer; 0 means it gave none (timed
	// out, connection refused).
	StatusCode int
	// Status describes the answer; empty means GitHub's wording for
	// StatusCode ("OK", "Invalid HTTP Response: 503", "timed out").
	Status string
	// DeliveredAt defaults to the fake's clock.
	DeliveredAt time.Time
	// Redelivery marks an attempt made by a redelivery.
	Redelivery     bool
	InstallationID int64
	RepositoryID   int64
}

// hookLog is one Server's delivery log. Guarded by Server.mu.
type hookLog struct {
	attempts  []HookDelivery // in id order
	requested []int64        // attempt ids whose redelivery was asked for
	redeliver func(HookDelivery) int
}

// hooks returns the Server's delivery log, creating it on first use
// (called with s.mu held).
func (s *Server) hooks() *hookLog {
	if s.hookLog == nil {
		s.hookLog = &hookLog{}
	}
	return s.hookLog
}

// RecordDelivery adds an attempt to the log of d.AppID's webhook and
// returns its id. Ids grow with every attempt recorded, and the list is
// served newest (highest id) first, as GitHub does.
func (s *Server) RecordDelivery(d HookDelivery) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps[d.AppID] == nil {
		return 0, fmt.Errorf("fakegithub: record delivery: app %d is not registered", d.AppID)
	}
	if d.Event == "" {
		return 0, fmt.Errorf("fakegithub: record delivery: event is required")
	}
	return s.recordDelivery(d), nil
}

// recordDelivery fills d's defaults and appends it. Called with s.mu held.
func (s *Server) recordDelivery(d HookDelivery) int64 {
	d.ID = s.newID()
	if d.GUID == "" {
		d.GUID = fmt.Sprintf("%08x-b361-11eb-836d-%012x", d.ID, d.ID)
	}
	if d.Status == "" {
		d.Status = deliveryStatus(d.StatusCode)
	}
	if d.DeliveredAt.IsZero() {
		d.DeliveredAt = s.now()
	}
	d.DeliveredAt = d.DeliveredAt.UTC().Truncate(time.Second)
	h := s.hooks()
	h.attempts = append(h.attempts, d)
	return d.ID
}

func deliveryStatus(code int) string {
	switch {
	case code == 0:
		return "timed out"
	case code >= 200 && code <= 299:
		return "OK"
	}
	return "Invalid HTTP Response: " + strconv.Itoa(code)
}

// Deliveries returns the attempts logged for appID's webhook, newest first.
func (s *Server) Deliveries(appID int64) []HookDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appDeliveries(appID, "")
}

// appDeliveries is the app's log newest first, optionally only the
// "success" (status 200-399) or "failure" (400-599) attempts, as GitHub's
// status filter. Called with s.mu held.
func (s *Server) appDeliveries(appID int64, status string) []HookDelivery {
	var out []HookDelivery
	for _, d := range slices.Backward(s.hooks().attempts) {
		ok := d.StatusCode >= 200 && d.StatusCode <= 399
		if d.AppID == appID && (status == "" || status == "success" && ok || status == "failure" && !ok) {
			out = append(out, d)
		}
	}
	return out
}

// RedeliveryRequests returns the attempt ids whose redelivery was asked
// for (and accepted with 202), in order.
func (s *Server) RedeliveryRequests() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hooks().requested)
}

// RedeliverWith makes every accepted redelivery log a new attempt of the
// same event (Redelivery set, delivered now) whose status code fn returns
// (0: no answer). fn runs with the fake locked and must not call it. With
// no fn (the default), a redelivery is only recorded in
// RedeliveryRequests.
func (s *Server) RedeliverWith(fn func(d HookDelivery) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks().redeliver = fn
}

// listHookDeliveries serves GET /app/hook/deliveries: per_page (default
// 30, at most 100), cursor (where the page starts, from the Link header's
// rel="next"), and the status filter.
func (s *Server) listHookDeliveries(c *call) reply {
	per, _ := strconv.Atoi(c.query.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	status := c.query.Get("status")
	if status != "" && status != "success" && status != "failure" {
		return validation(docRoot+"/apps/webhooks#list-deliveries-for-an-app-webhook",
			fieldError{"resource": "Delivery", "field": "status", "code": "invalid"})
	}
	all := s.appDeliveries(c.app.id, status)
	start := 0
	if cur := c.query.Get("cursor"); cur != "" {
		id, err := strconv.ParseInt(strings.TrimPrefix(cur, "v1_"), 10, 64)
		if err != nil || !strings.HasPrefix(cur, "v1_") {
			return errorReply(http.StatusBadRequest, "Invalid cursor", docRoot)
		}
		start = len(all)
		for i, d := range all {
			if d.ID <= id {
				start = i
				break
			}
		}
	}
	end := min(start+per, len(all))
	page := make([]obj, 0, end-start)
	for _, d := range all[start:end] {
		page = append(page, deliveryJSON(d))
	}
	rep := ok(page)
	if end < len(all) {
		q := url.Values{}
		q.Set("per_page", strconv.Itoa(per))
		q.Set("cursor", "v1_"+itoa(all[end].ID))
		if status != "" {
			q.Set("status", status)
		}
		rep.set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, s.api("/app/hook/deliveries"), q.Encode()))
	}
	return rep
}

// deliveryJSON renders a hook-delivery-item.
func deliveryJSON(d HookDelivery) obj {
	return obj{
		"id": d.ID, "guid": d.GUID, "delivered_at": stamp(d.DeliveredAt), "redelivery": d.Redelivery,
		"duration": 0.27, "status": d.Status, "status_code": d.StatusCode, "event": d.Event,
		"action": orNull(d.Action), "installation_id": idOrNull(d.InstallationID),
		"repository_id": idOrNull(d.RepositoryID), "throttled_at": nil,
	}
}

func idOrNull(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// redeliverHook serves POST /app/hook/deliveries/{id}/attempts: 202 for an
// attempt of the App's webhook from the last three days, 404 for an
// unknown one, 422 for an older one (the fake's choice: GitHub documents
// 400 and 422 without saying which).
func (s *Server) redeliverHook(c *call) reply {
	id, _ := c.intParam("id")
	for _, d := range s.appDeliveries(c.app.id, "") {
		if d.ID != id {
			continue
		}
		if s.clock().Sub(d.DeliveredAt) > redeliveryWindow {
			return validation(docRoot+"/apps/webhooks#redeliver-a-delivery-for-an-app-webhook",
				fieldError{"resource": "Delivery", "field": "delivered_at", "code": "custom",
					"message": "Deliveries older than 3 days cannot be redelivered"})
		}
		h := s.hooks()
		h.requested = append(h.requested, id)
		if h.redeliver != nil {
			again := d
			again.ID, again.Status, again.DeliveredAt, again.Redelivery = 0, "", time.Time{}, true
			again.StatusCode = h.redeliver(d)
			s.recordDelivery(again)
		}
		return reply{status: http.StatusAccepted, body: obj{}}
	}
	return notFound()
}
