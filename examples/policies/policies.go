// Package policies holds the worked policy files: the demo agent's
// (customer-service.yaml, which the demo and the health check run under),
// the τ-bench airline and retail policies written sentence by sentence, and
// AgentDojo's suite profiles. FS embeds them, so that a program runs under
// the same file that "agentguard evaluate -policy" reads.
package policies

import "embed"

// FS holds the policy files of this folder, by file name.
//
//go:embed *.yaml
var FS embed.FS
