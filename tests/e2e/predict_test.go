package e2e

// What `rdma-webhook mutate` and `check` predict, and comparing it with
// what the API server stored.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from,omitempty"`
	Value any    `json:"value,omitempty"`
}

// rw runs the rdma-webhook CLI; exit code 1 (error findings) is not an error.
func rw(stdin string, args ...string) (string, string, int, error) {
	cmd := exec.Command(E.rwBinary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		err = nil
	}
	return out.String(), errb.String(), code, err
}

// predict returns the patch and the mutated object the CLI predicts for
// the single document in file, in namespace ns.
func predict(t *testing.T, ns, file string) ([]patchOp, map[string]any) {
	t.Helper()
	out, stderr, code, err := rw("", "mutate", "-o", "patch", "--policy", E.policy, "--namespace", ns, file)
	if err != nil || code > 1 {
		t.Fatalf("rdma-webhook mutate -o patch --namespace %s %s: exit %d %v: %s", ns, file, code, err, stderr)
	}
	var ops []patchOp
	line := firstLine(out)
	if err := json.Unmarshal([]byte(line), &ops); err != nil {
		t.Fatalf("mutate -o patch printed %q: %v", out, err)
	}
	out, stderr, code, err = rw("", "mutate", "-o", "json", "--policy", E.policy, "--namespace", ns, file)
	if err != nil || code > 1 {
		t.Fatalf("rdma-webhook mutate -o json --namespace %s %s: exit %d %v: %s", ns, file, code, err, stderr)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(firstLine(out)), &obj); err != nil {
		t.Fatalf("mutate -o json printed %q: %v", out, err)
	}
	return ops, obj
}

type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// predictedErrors returns the error findings `check` reports on the
// object `mutate` predicts (what the validating webhook sees).
func predictedErrors(t *testing.T, ns string, mutated map[string]any) []finding {
	t.Helper()
	out, stderr, code, err := rw(mustJSON(mutated), "check", "-o", "json", "--policy", E.policy, "--namespace", ns, "-")
	if err != nil || code > 1 {
		t.Fatalf("rdma-webhook check -o json: exit %d %v: %s", code, err, stderr)
	}
	var res struct {
		Results []struct {
			Findings []finding `json:"findings"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("check -o json printed %q: %v", out, err)
	}
	var errs []finding
	for _, r := range res.Results {
		for _, f := range r.Findings {
			if f.Severity == "error" {
				errs = append(errs, f)
			}
		}
	}
	return errs
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// podRef names a pod for stored (instead of a manifest file).
func podRef(name string) string { return "pod/" + name }

// stored returns the object kubectl reads back for the document in file
// (or for a podRef).
func stored(t *testing.T, ns, file string) map[string]any {
	t.Helper()
	ref := []string{"-f", file}
	if strings.HasPrefix(file, "pod/") {
		ref = []string{file}
	}
	out, stderr, err := E.kc(append([]string{"get", "-n", ns, "-o", "json"}, ref...)...)
	if err != nil {
		t.Fatalf("kubectl get %s: %v: %s", file, err, stderr)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("kubectl get printed %q: %v", out, err)
	}
	return obj
}

// comparePatched checks that at every location the predicted patch
// writes, the stored object holds what the predicted object holds. The API
// server's defaulting may add fields inside written objects (a subset
// comparison), never change a written value.
func comparePatched(ops []patchOp, predicted, got map[string]any) []string {
	var diffs []string
	for _, op := range ops {
		ptr := op.Path
		switch op.Op {
		case "add", "replace", "copy", "move":
		case "remove":
			if _, ok := lookup(got, ptr); ok && !isArrayIndex(ptr) {
				diffs = append(diffs, fmt.Sprintf("%s %s: still present in the stored object", op.Op, ptr))
			}
			continue
		default:
			continue
		}
		// An appended or inserted array element: compare the whole array.
		if strings.HasSuffix(ptr, "/-") || (op.Op == "add" && isArrayIndex(ptr)) {
			ptr = ptr[:strings.LastIndexByte(ptr, '/')]
		}
		want, ok := lookup(predicted, ptr)
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s: not in the predicted object (mutate -o json and -o patch disagree)", op.Op, ptr))
			continue
		}
		have, ok := lookup(got, ptr)
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s: missing in the stored object; predicted %s", op.Op, ptr, mustJSON(want)))
			continue
		}
		if !subset(want, have) {
			diffs = append(diffs, fmt.Sprintf("%s %s:\n  predicted %s\n  stored    %s", op.Op, ptr, mustJSON(want), mustJSON(have)))
		}
	}
	return diffs
}

func isArrayIndex(ptr string) bool {
	last := ptr[strings.LastIndexByte(ptr, '/')+1:]
	_, err := strconv.Atoi(last)
	return err == nil
}

// lookup resolves an RFC 6901 pointer.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// subset: every field of want is in have with the same value; arrays have
// the same length and match element by element; a number equals its
// string form (resource quantities).
func subset(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			hv, ok := h[k]
			if !ok || !subset(v, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	case float64:
		if hs, ok := have.(string); ok {
			return strconv.FormatFloat(w, 'f', -1, 64) == hs
		}
		return reflect.DeepEqual(want, have)
	case string:
		if hf, ok := have.(float64); ok {
			return strconv.FormatFloat(hf, 'f', -1, 64) == w
		}
		return w == have
	default:
		return reflect.DeepEqual(want, have)
	}
}
