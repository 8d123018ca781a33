// What Multus makes of a pod's k8s.v1.cni.cncf.io/networks annotation, stage by stage.
//
// The Go module proxy refuses gopkg.in/k8snetworkplumbingwg/multus-cni.v4 (403), so the
// annotation parsing below is a port, written anew, of multus-cni commit
// 95a0932350f0060cd232096876e24672a1de83fa (2026-08-20):
//   - pkg/k8sclient/k8sclient.go: parsePodNetworkObjectName, parsePodNetworkAnnotation,
//     GetPodNetwork (an empty value is "no network", not an error), GetNetworkDelegates and
//     getKubernetesDelegate (each network is looked up as a NetworkAttachmentDefinition),
//     TryLoadPodDelegates (types.CheckGatewayConfig over every delegate);
//   - pkg/types/types.go: NetworkSelectionElement, PortMapEntry, BandwidthEntry (the JSON
//     form is decoded into these with encoding/json: keys match case-insensitively, unknown
//     keys are ignored, a wrong JSON type is an error);
//   - pkg/multus/multus.go: getIfname (net<idx>, idx counting the cluster network as 0) and
//     DelegateAdd/validateIfName (an interface name the pod already has fails the ADD).
//
// Everything the port leans on is the real thing: encoding/json, net.ParseMAC, net.ParseIP,
// net.ParseCIDR, net.IP's JSON decoding, libcni's interface-name check
// (github.com/containernetworking/cni v1.3.0, the version Multus pins) and apimachinery's
// DNS-1123 validation (v0.36.2, likewise).
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"syscall"

	cniutils "github.com/containernetworking/cni/pkg/utils"
	"k8s.io/apimachinery/pkg/util/validation"
)

type portMapEntry struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
	HostIP        string `json:"hostIP,omitempty"`
}

type bandwidthEntry struct {
	IngressRate  int `json:"ingressRate"`
	IngressBurst int `json:"ingressBurst"`
	EgressRate   int `json:"egressRate"`
	EgressBurst  int `json:"egressBurst"`
}

// selection has the fields, JSON names and Go types of Multus' NetworkSelectionElement.
type selection struct {
	Name                       string                  `json:"name"`
	Namespace                  string                  `json:"namespace,omitempty"`
	IPRequest                  []string                `json:"ips,omitempty"`
	MacRequest                 string                  `json:"mac,omitempty"`
	InfinibandGUIDRequest      string                  `json:"infiniband-guid,omitempty"`
	InterfaceRequest           string                  `json:"interface,omitempty"`
	DeprecatedInterfaceRequest string                  `json:"interfaceRequest,omitempty"`
	PortMappingsRequest        []*portMapEntry         `json:"portMappings,omitempty"`
	BandwidthRequest           *bandwidthEntry         `json:"bandwidth,omitempty"`
	DeviceID                   string                  `json:"deviceID,omitempty"`
	CNIArgs                    *map[string]interface{} `json:"cni-args"`
	GatewayRequest             *[]net.IP               `json:"default-route,omitempty"`
}

// Outcome is one row of the vectors file.
type Outcome struct {
	// "" (the pod gets its networks), "parse" (Multus cannot read the value: nothing is
	// attached), "lookup" (a named network or namespace cannot exist, so the
	// NetworkAttachmentDefinition lookup fails), "gateway" (more than one default route per
	// IP family) or "interface" (an interface name libcni refuses or the pod already has).
	Stage    string       `json:"stage"`
	Message  string       `json:"message,omitempty"`
	Networks []Attachment `json:"networks"`
}

// Attachment is what Multus attaches for one item.
type Attachment struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Interface string `json:"interface"`
}

var dnsLabelShape = regexp.MustCompile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

// objectName reads one comma-form item: [namespace/]name[@interface].
func objectName(item string) (ns, name, ifname string, err error) {
	slash := strings.Split(item, "/")
	switch len(slash) {
	case 1:
		name = slash[0]
	case 2:
		ns, name = strings.TrimSpace(slash[0]), slash[1]
	default:
		return "", "", "", fmt.Errorf("more than one '/' in %q", item)
	}
	at := strings.Split(name, "@")
	if len(at) > 2 {
		return "", "", "", fmt.Errorf("more than one '@' in %q", item)
	}
	name = strings.TrimSpace(at[0])
	if len(at) == 2 {
		ifname = strings.TrimSpace(at[1])
	}
	for _, part := range []string{ns, name} {
		if part != "" && !dnsLabelShape.MatchString(part) {
			return "", "", "", fmt.Errorf("%q is not a lower-case DNS label", part)
		}
	}
	if ifname != "" && (len(ifname) > syscall.IFNAMSIZ-1 || strings.ContainsAny(ifname, " \t\n\v\f\r/")) {
		return "", "", "", fmt.Errorf("interface name %q: over 15 bytes, a space or '/'", ifname)
	}
	return ns, name, ifname, nil
}

// parseAnnotation is parsePodNetworkAnnotation; a nil element of a JSON list makes Multus
// dereference nil, which the caller recovers as a parse failure.
func parseAnnotation(value, podNamespace string) ([]*selection, error) {
	var list []*selection
	if strings.ContainsAny(value, "[{\"") {
		if err := json.Unmarshal([]byte(value), &list); err != nil {
			return nil, fmt.Errorf("JSON: %v", err)
		}
	} else {
		for _, item := range strings.Split(value, ",") {
			ns, name, ifname, err := objectName(strings.TrimSpace(item))
			if err != nil {
				return nil, err
			}
			list = append(list, &selection{Name: name, Namespace: ns, InterfaceRequest: ifname})
		}
	}
	for _, n := range list {
		if n.Namespace == "" {
			n.Namespace = podNamespace
		}
		if n.MacRequest != "" {
			if _, err := net.ParseMAC(n.MacRequest); err != nil {
				return nil, err
			}
		}
		if n.InfinibandGUIDRequest != "" {
			if _, err := net.ParseMAC(n.InfinibandGUIDRequest); err != nil {
				return nil, err
			}
		}
		for _, ip := range n.IPRequest {
			if strings.Contains(ip, "/") {
				if _, _, err := net.ParseCIDR(ip); err != nil {
					return nil, err
				}
			} else if net.ParseIP(ip) == nil {
				return nil, fmt.Errorf("invalid IP address %q", ip)
			}
		}
		if n.DeprecatedInterfaceRequest != "" && n.InterfaceRequest == "" {
			n.InterfaceRequest = n.DeprecatedInterfaceRequest
		}
	}
	return list, nil
}

func safeParse(value, podNamespace string) (list []*selection, err error) {
	defer func() {
		if r := recover(); r != nil {
			list, err = nil, fmt.Errorf("Multus panics: %v", r)
		}
	}()
	return parseAnnotation(value, podNamespace)
}

// Evaluate follows the annotation through Multus' ADD as far as the annotation alone decides
// it, assuming the Multus configuration lists no defaultNetworks of its own.
func Evaluate(value, podNamespace string) Outcome {
	out := Outcome{Networks: []Attachment{}}
	if value == "" { // GetPodNetwork: no annotation, no networks
		return out
	}
	list, err := safeParse(value, podNamespace)
	if err != nil {
		out.Stage, out.Message = "parse", err.Error()
		return out
	}
	for i, n := range list {
		ifname := n.InterfaceRequest
		if ifname == "" {
			ifname = fmt.Sprintf("net%d", i+1)
		}
		out.Networks = append(out.Networks, Attachment{n.Namespace, n.Name, ifname})
	}
	// GetNetworkDelegates: each item is fetched as a NetworkAttachmentDefinition; custom
	// resources are named as DNS-1123 subdomains, namespaces as DNS-1123 labels.
	for _, n := range list {
		if msgs := validation.IsDNS1123Subdomain(n.Name); n.Name == "" || len(msgs) > 0 {
			out.Stage, out.Message = "lookup", fmt.Sprintf("no NetworkAttachmentDefinition can be named %q", n.Name)
			return out
		}
		if msgs := validation.IsDNS1123Label(n.Namespace); len(msgs) > 0 {
			out.Stage, out.Message = "lookup", fmt.Sprintf("no namespace can be named %q", n.Namespace)
			return out
		}
	}
	// CheckGatewayConfig: at most one default route per family; a nil IP (from "" or null)
	// has no IPv4 form and counts as IPv6.
	v4, v6 := 0, 0
	for _, n := range list {
		if n.GatewayRequest == nil {
			continue
		}
		for _, gw := range *n.GatewayRequest {
			if gw.To4() != nil {
				v4++
			} else {
				v6++
			}
		}
	}
	if v4 > 1 || v6 > 1 {
		out.Stage, out.Message = "gateway", "more than one default route per IP family (ECMP)"
		return out
	}
	// DelegateAdd: the cluster network took eth0, lo exists, each delegate takes its name.
	taken := map[string]bool{"eth0": true, "lo": true}
	for _, a := range out.Networks {
		if taken[a.Interface] {
			out.Stage, out.Message = "interface", fmt.Sprintf("interface %q already exists", a.Interface)
			return out
		}
		if cerr := cniutils.ValidateInterfaceName(a.Interface); cerr != nil {
			out.Stage, out.Message = "interface", fmt.Sprintf("interface %q: %s", a.Interface, cerr.Msg)
			return out
		}
		taken[a.Interface] = true
	}
	return out
}
