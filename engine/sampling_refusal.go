package engine

import "encoding/json"

// A sampling request is a question a run asks the MCP client's model
// (QuestionMCP with method sampling/createMessage). When the client fails it
// (a person who declined, a client error), the MCP layer stores a refusal
// as the answer, so the run fails at once with the client's message
// instead of waiting out the input timeout. The MCP layer writes the
// refusal and the sampler reads it, so its shape lives here, between them.

// samplingRefusal is the stored shape of a refused sampling request.
type samplingRefusal struct {
	Refused struct {
		Message string `json:"message"`
	} `json:"refused"`
}

// SamplingRefusal is the answer stored for a sampling request the client
// failed with msg.
func SamplingRefusal(msg string) json.RawMessage {
	var r samplingRefusal
	r.Refused.Message = msg
	b, _ := json.Marshal(r)
	return b
}

// SamplingRefused reports whether answer is a refusal SamplingRefusal
// wrote, and its message.
func SamplingRefused(answer json.RawMessage) (string, bool) {
	var r samplingRefusal
	if json.Unmarshal(answer, &r) != nil || r.Refused.Message == "" {
		return "", false
	}
	return r.Refused.Message, true
}
