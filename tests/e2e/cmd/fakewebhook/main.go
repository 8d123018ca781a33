// Command fakewebhook is a TEST DOUBLE of rdma-webhook for checking the e2e
// harness itself (run.sh --self-test) while the real server is not built.
// It is not the product and proves nothing about it: it implements just
// enough of docs/cli.md and docs/http.md (serve, mutate -o patch|json, check -o json) for
// the e2e policy in testdata/policy.yaml, with the namespaces' modes
// hard-coded by name prefix, and the two rules the scenarios trigger
// (invalid-nccl-value, legacy-network-key).
//
// FAKEWEBHOOK_BUG=socket|update|reapply makes the server (not the CLI)
// wrong on purpose, to prove the scenarios catch such a server: a socket
// interface other than the predicted one, template UPDATEs never judged,
// mutation that is not idempotent.
package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fakewebhook serve|mutate|check ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "mutate", "check":
		cli(os.Args[1], os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "fakewebhook: unknown command", os.Args[1])
		os.Exit(2)
	}
}

// ---------------------------------------------------------------- policy

func modeOf(ns string) string {
	switch {
	case strings.HasPrefix(ns, "e2e-hostnet"), ns == "kube-system":
		return "hostNetwork"
	case strings.HasPrefix(ns, "e2e-sriov"):
		return "sriov"
	case strings.HasPrefix(ns, "e2e-shared"):
		return "shared"
	case strings.HasPrefix(ns, "e2e-tcp"):
		return "tcp"
	}
	return "off"
}

// templates returns the JSON pointers of the pod templates of obj ("" for a Pod).
func templates(obj map[string]any) []string {
	kind, _ := obj["kind"].(string)
	av, _ := obj["apiVersion"].(string)
	group := ""
	if i := strings.Index(av, "/"); i >= 0 {
		group = av[:i]
	}
	spec, _ := obj["spec"].(map[string]any)
	var out []string
	switch {
	case kind == "Pod" && group == "":
		out = []string{""}
	case kind == "Job" && group == "batch", group == "apps":
		out = []string{"/spec/template"}
	case kind == "CronJob":
		out = []string{"/spec/jobTemplate/spec/template"}
	case group == "kubeflow.org":
		for k, v := range spec {
			if strings.HasSuffix(k, "ReplicaSpecs") {
				for role := range v.(map[string]any) {
					out = append(out, "/spec/"+k+"/"+role+"/template")
				}
			}
		}
	case group == "batch.volcano.sh":
		tasks, _ := spec["tasks"].([]any)
		for i := range tasks {
			out = append(out, fmt.Sprintf("/spec/tasks/%d/template", i))
		}
	case group == "jobset.x-k8s.io":
		rj, _ := spec["replicatedJobs"].([]any)
		for i := range rj {
			out = append(out, fmt.Sprintf("/spec/replicatedJobs/%d/template/spec/template", i))
		}
	case group == "leaderworkerset.x-k8s.io":
		out = []string{"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"}
	}
	return out
}

func get(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			if i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func isGPU(c map[string]any) bool {
	res, _ := c["resources"].(map[string]any)
	for _, k := range []string{"limits", "requests"} {
		if m, ok := res[k].(map[string]any); ok {
			if _, ok := m["nvidia.com/gpu"]; ok {
				return true
			}
		}
	}
	return false
}

func m(v any, key string) map[string]any {
	mm := v.(map[string]any)
	if x, ok := mm[key].(map[string]any); ok {
		return x
	}
	x := map[string]any{}
	mm[key] = x
	return x
}

var bug string // set in serve only

func setEnv(c map[string]any, name, value string) {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if e.(map[string]any)["name"] == name && bug != "reapply" {
			return
		}
	}
	if bug == "socket" && value == "bond0" {
		value = "bond1"
	}
	c["env"] = append(env, map[string]any{"name": name, "value": value})
}

// mutateTemplate changes tmpl (a pod template, or a Pod) in place.
func mutateTemplate(tmpl map[string]any, mode string) {
	spec, _ := tmpl["spec"].(map[string]any)
	if spec == nil {
		return
	}
	ctrs, _ := spec["containers"].([]any)
	gpu := false
	for _, c := range ctrs {
		gpu = gpu || isGPU(c.(map[string]any))
	}
	if !gpu {
		return
	}
	switch mode {
	case "hostNetwork":
		spec["hostNetwork"] = true
		spec["dnsPolicy"] = "ClusterFirstWithHostNet"
	case "sriov":
		ann := m(m(tmpl, "metadata"), "annotations")
		if ann["k8s.v1.cni.cncf.io/networks"] == nil {
			ann["k8s.v1.cni.cncf.io/networks"] = "sriov-rdma-net@eth1"
		}
	}
	first := true
	for _, ci := range ctrs {
		c := ci.(map[string]any)
		if !isGPU(c) {
			continue
		}
		switch mode {
		case "tcp":
			setEnv(c, "NCCL_IB_DISABLE", "1")
			setEnv(c, "NCCL_SOCKET_IFNAME", "eth0")
			continue
		case "hostNetwork":
			setEnv(c, "NCCL_SOCKET_IFNAME", "bond0")
		case "sriov":
			setEnv(c, "NCCL_SOCKET_IFNAME", "eth1")
		}
		setEnv(c, "NCCL_IB_DISABLE", "0")
		if first && (mode == "sriov" || mode == "shared") {
			r := map[string]string{"sriov": "rdma/vf", "shared": "rdma/hca_shared_devices_a"}[mode]
			res := m(c, "resources")
			if m(res, "limits")[r] == nil {
				m(res, "limits")[r] = "1"
				m(res, "requests")[r] = "1"
			}
		}
		first = false
		caps := m(m(c, "securityContext"), "capabilities")
		add, _ := caps["add"].([]any)
		has := false
		for _, a := range add {
			has = has || a == "IPC_LOCK"
		}
		if !has {
			caps["add"] = append(add, "IPC_LOCK")
		}
	}
	if mode == "hostNetwork" {
		vols, _ := spec["volumes"].([]any)
		has := false
		for _, v := range vols {
			has = has || v.(map[string]any)["name"] == "dshm"
		}
		if !has {
			spec["volumes"] = append(vols, map[string]any{"name": "dshm", "emptyDir": map[string]any{"medium": "Memory"}})
			for _, ci := range ctrs {
				c := ci.(map[string]any)
				if isGPU(c) {
					vm, _ := c["volumeMounts"].([]any)
					c["volumeMounts"] = append(vm, map[string]any{"name": "dshm", "mountPath": "/dev/shm"})
				}
			}
		}
	}
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// mutate returns the mutated copy and the patch (one add per changed
// template spec/metadata).
func mutate(obj map[string]any, ns string) (map[string]any, []patchOp) {
	mode := modeOf(ns)
	out := deepCopy(obj).(map[string]any)
	ops := []patchOp{}
	if mode == "off" {
		return out, ops
	}
	for _, p := range templates(out) {
		t, _ := get(out, p).(map[string]any)
		if t == nil {
			continue
		}
		before := deepCopy(t).(map[string]any)
		mutateTemplate(t, mode)
		for _, k := range []string{"metadata", "spec"} {
			if !reflect.DeepEqual(before[k], t[k]) {
				ops = append(ops, patchOp{"add", p + "/" + k, t[k]})
			}
		}
	}
	return out, ops
}

type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func check(obj map[string]any) []finding {
	var fs []finding
	for _, p := range templates(obj) {
		t, _ := get(obj, p).(map[string]any)
		if t == nil {
			continue
		}
		if ann, ok := get(t, "/metadata/annotations").(map[string]any); ok {
			if _, ok := ann["kubernetes.v1.cni.cncf.io/networks"]; ok {
				fs = append(fs, finding{"legacy-network-key", "error",
					"the template uses kubernetes.v1.cni.cncf.io/networks, which Multus ignores: rename it to k8s.v1.cni.cncf.io/networks"})
			}
		}
		ctrs, _ := get(t, "/spec/containers").([]any)
		for _, ci := range ctrs {
			env, _ := ci.(map[string]any)["env"].([]any)
			for _, e := range env {
				em := e.(map[string]any)
				if em["name"] == "NCCL_IB_GID_INDEX" {
					if _, err := strconv.Atoi(fmt.Sprint(em["value"])); err != nil {
						fs = append(fs, finding{"invalid-nccl-value", "error",
							fmt.Sprintf("NCCL_IB_GID_INDEX=%v is not an integer, NCCL ignores it: set a GID index such as 3", em["value"])})
					}
				}
			}
		}
	}
	return fs
}

// ---------------------------------------------------------------- CLI

func cli(cmd string, args []string) {
	fl := flag.NewFlagSet(cmd, flag.ExitOnError)
	out := fl.String("o", "json", "")
	ns := fl.String("namespace", "default", "")
	fl.String("policy", "", "")
	_ = fl.Parse(args)
	var data []byte
	var err error
	if fl.Arg(0) == "-" || fl.NArg() == 0 {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(fl.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if cmd == "mutate" {
		mut, ops := mutate(obj, *ns)
		if *out == "patch" {
			b, _ := json.Marshal(ops)
			fmt.Println(string(b))
		} else {
			b, _ := json.Marshal(mut)
			fmt.Println(string(b))
		}
		if len(check(mut)) > 0 {
			os.Exit(1)
		}
		return
	}
	fs := check(obj)
	if fs == nil {
		fs = []finding{}
	}
	b, _ := json.Marshal(map[string]any{"results": []any{map[string]any{"findings": fs}}})
	fmt.Println(string(b))
	if len(fs) > 0 {
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- server

type certLoader struct {
	certFile, keyFile string
	mu                sync.Mutex
	cert              *tls.Certificate
	stamp             string
}

func (l *certLoader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, _ := os.ReadFile(l.certFile)
	k, _ := os.ReadFile(l.keyFile)
	stamp := string(c) + string(k)
	if stamp != l.stamp {
		if pair, err := tls.X509KeyPair(c, k); err == nil {
			l.cert, l.stamp = &pair, stamp
		}
	}
	return l.cert, nil
}

var requests atomic.Int64

func serve(args []string) {
	fl := flag.NewFlagSet("serve", flag.ExitOnError)
	cert := fl.String("tls-cert", "", "")
	key := fl.String("tls-key", "", "")
	listen := fl.String("listen", "127.0.0.1:8443", "")
	probe := fl.String("probe-listen", "127.0.0.1:8080", "")
	fl.String("policy", "", "")
	fl.String("log-format", "text", "")
	fl.String("log-level", "info", "")
	fl.String("shutdown-delay", "5s", "")
	_ = fl.Parse(args)
	bug = os.Getenv("FAKEWEBHOOK_BUG")
	loader := &certLoader{certFile: *cert, keyFile: *key}
	if _, err := loader.get(nil); err != nil || loader.cert == nil {
		fmt.Fprintln(os.Stderr, "fakewebhook: cannot load the serving certificate")
		os.Exit(1)
	}
	go func() {
		mux := http.NewServeMux()
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "rdma_webhook_requests_total{endpoint=\"all\",code=\"200\"} %d\n", requests.Load())
		})
		fmt.Fprintln(os.Stderr, http.ListenAndServe(*probe, mux))
		os.Exit(1)
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) { review(w, r, true) })
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) { review(w, r, false) })
	srv := &http.Server{Addr: *listen, Handler: mux, TLSConfig: &tls.Config{GetCertificate: loader.get},
		ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(os.Stderr, "fakewebhook: serving on", *listen)
	fmt.Fprintln(os.Stderr, srv.ListenAndServeTLS("", ""))
	os.Exit(1)
}

func templatesChanged(obj, old map[string]any) bool {
	for _, p := range templates(obj) {
		a := deepCopy(get(obj, p))
		b := deepCopy(get(old, p))
		for _, t := range []any{a, b} {
			if ann, ok := get(t, "/metadata/annotations").(map[string]any); ok {
				delete(ann, "kubectl.kubernetes.io/restartedAt")
				if len(ann) == 0 {
					delete(t.(map[string]any)["metadata"].(map[string]any), "annotations")
				}
			}
		}
		if !reflect.DeepEqual(a, b) {
			return true
		}
	}
	return false
}

func review(w http.ResponseWriter, r *http.Request, isMutate bool) {
	requests.Add(1)
	var rev struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Request    struct {
			UID       string         `json:"uid"`
			Namespace string         `json:"namespace"`
			Operation string         `json:"operation"`
			Object    map[string]any `json:"object"`
			OldObject map[string]any `json:"oldObject"`
		} `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&rev); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	req := rev.Request
	resp := map[string]any{"uid": req.UID, "allowed": true}
	active := req.Operation == "CREATE" || (req.Operation == "UPDATE" && templatesChanged(req.Object, req.OldObject) && bug != "update")
	fmt.Fprintf(os.Stderr, "%s %s %s/%s %s active=%v\n", time.Now().Format(time.RFC3339Nano), r.URL.Path,
		req.Namespace, get(req.Object, "/metadata/name"), req.Operation, active)
	if active && req.Object != nil {
		if isMutate {
			_, ops := mutate(req.Object, req.Namespace)
			if len(ops) > 0 {
				b, _ := json.Marshal(ops)
				resp["patch"] = base64.StdEncoding.EncodeToString(b)
				resp["patchType"] = "JSONPatch"
			}
		} else if fs := check(req.Object); len(fs) > 0 && modeOf(req.Namespace) != "off" {
			var msg []string
			for _, f := range fs {
				msg = append(msg, f.Rule+": "+f.Message)
			}
			resp["allowed"] = false
			resp["status"] = map[string]any{"code": 403, "reason": "Forbidden", "message": strings.Join(msg, "; ")}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": rev.APIVersion, "kind": rev.Kind, "response": resp})
}
