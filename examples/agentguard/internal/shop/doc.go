// Package shop is the demo customer-service agent behind "agentguard demo"
// and "agentguard health": a small shop (orders, returns, SMS), its six
// tools, a bilingual after-sales knowledge base with a BM25 retriever, and a
// deterministic model that behaves like an LLM agent — failure modes
// included — without any network. Tests and the health check reuse it.
package shop
