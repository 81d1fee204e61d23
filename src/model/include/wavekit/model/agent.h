// The optional agent path: a code-translation agent that asks a language model, over the
// OpenAI-compatible chat-completions API at an endpoint the user names, for the application
// model of one kernel (constrained to the schema by response_format json_schema). Every answer
// is parsed against the schema and checked by the evaluator (check_kernel); an answer that
// breaks the schema is sent back once with the error, then refused with a message naming it.
// Where the binary path ran, the agent's counts are compared with its counts.
// Plain http:// endpoints only (a local server or a proxy); no accuracy is claimed for it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wavekit/model/counts.h"

namespace wavekit::model {

struct AgentRequest {
  std::string endpoint;  // e.g. "http://127.0.0.1:8000/v1" (…/chat/completions is appended)
  std::string model;     // the model name the endpoint serves
  std::string api_key;   // sent as "Authorization: Bearer" when not empty
  std::string source;    // the kernel's source text
  std::string kernel;    // its name
  std::string launch;    // launch configuration and arguments, in words
  int attempts = 2;      // the first answer, and one retry with the schema error
  double timeout_seconds = 120;
};

struct AgentResult {
  KernelModel model;
  std::vector<std::string> problems;      // the evaluator's, and the comparison's
  std::vector<nlohmann::json> exchanges;  // requests and answers, for the record
};

// The JSON schema the agent's answer must follow (one kernel of the application model).
nlohmann::json agent_schema();

// The chat-completions request body for `request` (exposed for tests).
nlohmann::json agent_request_body(const AgentRequest& request, const std::string& correction = "");

// Asks, parses, checks. Throws wavekit::Error for a transport failure (naming the endpoint and
// the HTTP status) or when no attempt produced an answer that follows the schema.
AgentResult ask_agent(const AgentRequest& request);

// Count-by-count differences between an agent's model and the binary path's (relative error
// above `tolerance`), one sentence each.
std::vector<std::string> compare_models(const KernelModel& agent, const KernelModel& binary,
                                        double tolerance = 0.05);

// A minimal HTTP/1.0 POST (exposed for tests): returns the status code and the body.
struct HttpResponse {
  int status = 0;
  std::string body;
};
HttpResponse http_post(const std::string& url, const std::string& body,
                       const std::vector<std::string>& headers, double timeout_seconds);

}  // namespace wavekit::model
