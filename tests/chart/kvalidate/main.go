// rw-kvalidate: offline check that rendered manifests are valid Kubernetes
// objects. Each document is decoded strictly into its k8s.io/api type
// (unknown or duplicate fields and wrong types are errors), and names and
// labels are checked with the API machinery's own validators. Kinds served
// by CRDs (cert-manager, prometheus-operator) are only checked for
// well-formed metadata.
//
//	rw-kvalidate FILE...
//
// Prints one line per problem and a summary; exit 1 on any problem.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var crdKinds = map[string]bool{
	"cert-manager.io/v1/Certificate":          true,
	"cert-manager.io/v1/Issuer":               true,
	"cert-manager.io/v1/ClusterIssuer":        true,
	"monitoring.coreos.com/v1/ServiceMonitor": true,
	"monitoring.coreos.com/v1/PrometheusRule": true,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rw-kvalidate FILE...")
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme,
		networkingv1.AddToScheme, admissionregistrationv1.AddToScheme, rbacv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

	objects, problems, crd := 0, 0, 0
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Println("ERROR", err)
			problems++
			continue
		}
		reader := utilyaml.NewYAMLReader(bufioReader(data))
		for i := 0; ; i++ {
			doc, err := reader.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Printf("ERROR %s#%d: %v\n", path, i, err)
				problems++
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 || isOnlyComments(doc) {
				continue
			}
			json, err := utilyaml.ToJSON(doc)
			if err != nil {
				fmt.Printf("ERROR %s#%d: %v\n", path, i, err)
				problems++
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(json); err != nil {
				fmt.Printf("ERROR %s#%d: %v\n", path, i, err)
				problems++
				continue
			}
			objects++
			where := fmt.Sprintf("%s#%d %s/%s", path, i, u.GetKind(), u.GetName())
			for _, e := range checkMeta(u) {
				fmt.Printf("ERROR %s: %s\n", where, e)
				problems++
			}
			gvk := u.GroupVersionKind()
			if crdKinds[gvk.GroupVersion().String()+"/"+gvk.Kind] {
				crd++
				continue
			}
			if _, _, err := decoder.Decode(json, nil, nil); err != nil {
				fmt.Printf("ERROR %s: %v\n", where, err)
				problems++
			}
		}
	}
	fmt.Printf("%d objects, %d CRD objects metadata-only, %d problems\n", objects, crd, problems)
	if problems > 0 || objects == 0 {
		os.Exit(1)
	}
}

func checkMeta(u *unstructured.Unstructured) []string {
	var out []string
	name := u.GetName()
	if name == "" {
		out = append(out, "metadata.name: required")
	} else {
		for _, m := range validation.IsDNS1123Subdomain(name) {
			out = append(out, "metadata.name: "+m)
		}
	}
	if ns := u.GetNamespace(); ns != "" {
		for _, m := range validation.IsDNS1123Label(ns) {
			out = append(out, "metadata.namespace: "+m)
		}
	}
	for _, e := range metavalidation.ValidateLabels(u.GetLabels(), field.NewPath("metadata", "labels")) {
		out = append(out, e.Error())
	}
	// Label selectors inside the objects.
	for _, p := range [][]string{{"spec", "selector"}, {"spec", "podSelector"}} {
		if m, ok, _ := unstructured.NestedMap(u.Object, p...); ok {
			if _, has := m["matchLabels"]; has || u.GetKind() != "Service" {
				sel := &metav1.LabelSelector{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, sel); err == nil {
					for _, e := range metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, field.NewPath(p[0], p[1:]...)) {
						out = append(out, e.Error())
					}
				}
			}
		}
	}
	return out
}

func isOnlyComments(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}
