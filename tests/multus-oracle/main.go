// Command multus-oracle reads cases.json (inputs) and writes the vectors file the C++ test
// asserts: what Multus makes of each annotation value (see oracle.go).
//
//	cd tests/multus-oracle && go run . -out ../unit/nccl/multus_vectors.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"log"
	"os"
)

type input struct {
	Comment      string `json:"comment"`
	Input        string `json:"input"`
	PodNamespace string `json:"pod_namespace"`
}

type row struct {
	input
	Error bool `json:"error"`
	Outcome
}

func main() {
	in := flag.String("in", "cases.json", "the inputs")
	out := flag.String("out", "../unit/nccl/multus_vectors.json", "the vectors file to write")
	flag.Parse()
	data, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var cases []input
	if err := json.Unmarshal(data, &cases); err != nil {
		log.Fatal(err)
	}
	rows := make([]row, 0, len(cases))
	for _, c := range cases {
		o := Evaluate(c.Input, c.PodNamespace)
		rows = append(rows, row{input: c, Error: o.Stage != "", Outcome: o})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(rows); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d vectors written to %s", len(rows), *out)
}
