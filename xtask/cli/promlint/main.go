// Command promlint checks the Prometheus text exposition on its standard input as
// `promtool check metrics` does: with client_golang's promlint, which parses it with
// Prometheus' own text parser and then lints it, at the versions Prometheus v3.16's promtool
// links. Exit status as promtool's: 0 clean, 1 unparsable, 3 lint problems (one per line).
package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func main() {
	problems, err := promlint.New(os.Stdin).Lint()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error while linting:", err)
		os.Exit(1)
	}
	for _, problem := range problems {
		fmt.Fprintln(os.Stderr, problem.Metric, problem.Text)
	}
	if len(problems) > 0 {
		os.Exit(3)
	}
}
