package runtime

import (
	"strings"
	"testing"
)

func TestParseKindAcceptsTheFlagValues(t *testing.T) {
	for in, want := range map[string]Kind{"auto": KindAuto, "": KindAuto, "uring": KindUring, "io_uring": KindUring, "POOL": KindPool} {
		got, err := ParseKind(in)
		if err != nil || got != want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseKind("epoll"); err == nil {
		t.Error("ParseKind(epoll) succeeded")
	}
}

func TestSelectAutoPicksUringWhenTheProbePassesElsePoolWithAReason(t *testing.T) {
	t.Setenv(EnvBackend, "")
	ok, probeReason, _ := ProbeUring()
	kind, reason, err := Select(KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case ok && kind != KindUring:
		t.Fatalf("probe passed (%s) but auto chose %v", probeReason, kind)
	case !ok && (kind != KindPool || !strings.Contains(reason, probeReason)):
		t.Fatalf("probe failed (%s) but auto chose %v with reason %q", probeReason, kind, reason)
	}
	t.Logf("auto → %v: %s", kind, reason)
}

func TestSelectHonoursPoolAndTheEnvironmentOverride(t *testing.T) {
	t.Setenv(EnvBackend, "")
	if k, _, err := Select(KindPool); err != nil || k != KindPool {
		t.Fatalf("Select(pool) = %v, %v", k, err)
	}
	t.Setenv(EnvBackend, "pool")
	for _, pref := range []Kind{KindAuto, KindUring} {
		k, reason, err := Select(pref)
		if err != nil || k != KindPool || !strings.Contains(reason, EnvBackend) {
			t.Fatalf("Select(%v) with %s=pool = %v, %q, %v", pref, EnvBackend, k, reason, err)
		}
	}
	t.Setenv(EnvBackend, "bogus")
	if _, _, err := Select(KindAuto); err == nil {
		t.Fatalf("Select with %s=bogus succeeded", EnvBackend)
	}
}

func TestSelectUringFailsLoudlyWhereIoUringIsMissing(t *testing.T) {
	t.Setenv(EnvBackend, "")
	ok, _, _ := ProbeUring()
	k, _, err := Select(KindUring)
	if ok != (err == nil) {
		t.Fatalf("probe ok=%v but Select(uring) = %v, %v", ok, k, err)
	}
}
