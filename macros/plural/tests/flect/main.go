// Command plural prints controller-gen's default plural of every kind read from stdin (one
// per line), one per line in the same order: strings.ToLower(flect.Pluralize(kind)), exactly
// what controller-gen v0.21.0 to v0.23.0 (sigs.k8s.io/controller-tools pkg/crd) compute.
//
// It is the peer of the tests in macros/plural/src/lib.rs, which compare it with our Rust port.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/gobuffalo/flect"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fmt.Fprintln(out, strings.ToLower(flect.Pluralize(in.Text())))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
