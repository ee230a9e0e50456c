package node

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/internal/natsutil"
)

func TestValidateNamesEveryProblem(t *testing.T) {
	cfg := Config{Replicas: 9, Cluster: natsutil.ClusterConfig{Name: "vigil"}, NATSURL: "nats://a:4222", Durability: "sometimes", TLSMode: "maybe"}
	err := cfg.Validate()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Validate: %v, want ErrInvalidConfig", err)
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *ConfigError", e)
		}
		fields = append(fields, ce.Field)
	}
	if got, want := strings.Join(fields, ","), "DataDir,Replicas,Cluster.Name,Durability,TLSMode"; got != want {
		t.Fatalf("fields %s, want %s (%v)", got, want, err)
	}
	// The library names its fields (the CLI names its flags: cmd/vigil's
	// TestServeRefusesBadFleetFlagsAtOnce).
	if !strings.Contains(err.Error(), "node: Replicas 9: use 1 on a single host") {
		t.Fatalf("message %q does not name the field and its value", err)
	}
	if !strings.Contains(err.Error(), "node: Cluster.Name: it starts an embedded cluster node and NATSURL attaches") {
		t.Fatalf("message %q does not name both fields of the conflict", err)
	}
}

func TestEnsureDefaultsTurnsSafetyOn(t *testing.T) {
	cfg := Config{DataDir: t.TempDir()}
	if err := cfg.EnsureDefaults(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a defaulted config does not validate: %v", err)
	}
	if cfg.Redactor == nil || cfg.NewRedactor == nil || cfg.CheckConfig == nil {
		t.Fatalf("redaction or the config check left off: %+v", cfg)
	}
	if cfg.Processors == nil || cfg.ProjectionsDir == "" || cfg.Replicas != 1 || cfg.NodeName != "local" {
		t.Fatalf("defaults not filled: %+v", cfg)
	}
	unsafe := Config{DataDir: t.TempDir(), UnsafeNoRedaction: true, UnsafeNoConfigCheck: true}
	if err := unsafe.EnsureDefaults(); err != nil {
		t.Fatal(err)
	}
	if unsafe.Redactor != nil || unsafe.NewRedactor != nil || unsafe.CheckConfig != nil {
		t.Fatal("the Unsafe switches did not turn redaction and the config check off")
	}
	if _, err := Start(t.Context(), Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Start without DataDir: %v", err)
	}
}
