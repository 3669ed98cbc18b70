package settings

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// repoFile reads a file from the module root.
func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func knownEnv(name string) bool {
	if strings.HasPrefix(name, "AUTOPILOT_") {
		return true
	}
	for _, s := range all() {
		if s.env == name {
			return true
		}
	}
	return false
}

func TestKubernetesExampleRunsTwoProbedReplicas(t *testing.T) {
	type container struct {
		Args []string `yaml:"args"`
		Env  []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		Liveness struct {
			HTTPGet struct {
				Path string `yaml:"path"`
			} `yaml:"httpGet"`
		} `yaml:"livenessProbe"`
		Readiness struct {
			HTTPGet struct {
				Path string `yaml:"path"`
			} `yaml:"httpGet"`
		} `yaml:"readinessProbe"`
	}
	type object struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			Replicas int `yaml:"replicas"`
			Template struct {
				Metadata struct {
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
				Spec struct {
					Containers []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(repoFile(t, "deploy/kubernetes.yaml"))))
	var found bool
	for {
		var o object
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("deploy/kubernetes.yaml: %v", err)
		}
		if o.Kind != "Deployment" || o.Metadata.Name != "autopilot" {
			continue
		}
		found = true
		if o.Spec.Replicas != 2 {
			t.Errorf("replicas = %d, want 2", o.Spec.Replicas)
		}
		c := o.Spec.Template.Spec.Containers[0]
		if !slices.Equal(c.Args, []string{"serve"}) {
			t.Errorf("args = %v, want [serve]", c.Args)
		}
		if c.Liveness.HTTPGet.Path != "/healthz" || c.Readiness.HTTPGet.Path != "/readyz" {
			t.Errorf("probes = %q, %q; want /healthz and /readyz", c.Liveness.HTTPGet.Path, c.Readiness.HTTPGet.Path)
		}
		admin := DefaultAdminAddr
		for _, e := range c.Env {
			if !knownEnv(e.Name) {
				t.Errorf("env %s is not a setting of bot serve", e.Name)
			}
			if e.Name == "ADMIN_ADDR" {
				admin = e.Value
			}
		}
		// Prometheus scrapes the pod's IP: /metrics must be on ADMIN_ADDR,
		// bound beyond loopback, at the annotated port.
		host, port, _ := strings.Cut(admin, ":")
		if ann := o.Spec.Template.Metadata.Annotations; ann["prometheus.io/port"] != port || host == "127.0.0.1" || host == "localhost" {
			t.Errorf("prometheus.io/port %q with ADMIN_ADDR %q: want the admin port, reachable from the pod's IP", ann["prometheus.io/port"], admin)
		}
	}
	if !found {
		t.Fatal("no autopilot Deployment in deploy/kubernetes.yaml")
	}
}

func TestComposeExampleRunsTwoReplicasWithRedis(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			Deploy      struct {
				Replicas int `yaml:"replicas"`
			} `yaml:"deploy"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(repoFile(t, "deploy/docker-compose.yml"), &compose); err != nil {
		t.Fatalf("deploy/docker-compose.yml: %v", err)
	}
	app, ok := compose.Services["autopilot"]
	if !ok {
		t.Fatal("no autopilot service")
	}
	if _, ok := compose.Services["redis"]; !ok {
		t.Fatal("no redis service")
	}
	if !slices.Equal(app.Command, []string{"serve"}) || app.Deploy.Replicas != 2 {
		t.Errorf("autopilot service: command %v replicas %d, want [serve] and 2", app.Command, app.Deploy.Replicas)
	}
	for name := range app.Environment {
		if !knownEnv(name) {
			t.Errorf("env %s is not a setting of bot serve", name)
		}
	}
	if !strings.HasPrefix(app.Environment["REDIS_URL"], "redis://redis:") {
		t.Errorf("REDIS_URL = %q, want the compose redis service", app.Environment["REDIS_URL"])
	}
}

func TestAppDocNamesEverySetting(t *testing.T) {
	doc := string(repoFile(t, "docs/app.md"))
	for _, s := range all() {
		if !strings.Contains(doc, "`"+s.env+"`") {
			t.Errorf("docs/app.md does not document %s", s.env)
		}
	}
	for _, path := range []string{DefaultWebhookPath, "/healthz", "/readyz", "/metrics"} {
		if !strings.Contains(doc, path) {
			t.Errorf("docs/app.md does not mention %s", path)
		}
	}
}
