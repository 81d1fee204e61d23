#include "wavekit/model/agent.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "wavekit/support/error.h"

namespace wavekit::model {

HttpResponse http_post(const std::string& url, const std::string& body,
                       const std::vector<std::string>& headers, double timeout_seconds) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    throw Error("endpoint " + url +
                ": only http:// endpoints are supported (use a local proxy for https)");
  std::string rest = url.substr(scheme.size());
  std::string hostport = rest.substr(0, rest.find('/'));
  std::string path = rest.find('/') == std::string::npos ? "/" : rest.substr(rest.find('/'));
  std::string host = hostport, port = "80";
  if (auto colon = hostport.rfind(':'); colon != std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw Error("endpoint " + url + ": cannot resolve " + host + ": " + gai_strerror(rc));
  int fd = -1;
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{};
    tv.tv_sec = long(timeout_seconds);
    tv.tv_usec = long((timeout_seconds - std::floor(timeout_seconds)) * 1e6);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0)
    throw Error("endpoint " + url + ": cannot connect to " + hostport + ": " +
                std::strerror(errno));
  std::string request =
      "POST " + path + " HTTP/1.0\r\nHost: " + hostport +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  for (const auto& h : headers) request += h + "\r\n";
  request += "\r\n" + body;
  for (std::size_t sent = 0; sent < request.size();) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      throw Error("endpoint " + url + ": send failed: " + std::strerror(errno));
    }
    sent += std::size_t(n);
  }
  std::string response;
  char buffer[8192];
  for (;;) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) {
      close(fd);
      throw Error("endpoint " + url + ": no answer within " + std::to_string(int(timeout_seconds)) +
                  " s");
    }
    if (n == 0) break;
    response.append(buffer, std::size_t(n));
  }
  close(fd);
  HttpResponse out;
  auto line_end = response.find("\r\n");
  if (response.rfind("HTTP/", 0) != 0 || line_end == std::string::npos)
    throw Error("endpoint " + url + ": the answer is not HTTP");
  out.status = std::atoi(response.c_str() + response.find(' ') + 1);
  auto body_start = response.find("\r\n\r\n");
  out.body = body_start == std::string::npos ? "" : response.substr(body_start + 4);
  return out;
}

nlohmann::json agent_schema() {
  nlohmann::json count_names = nlohmann::json::array();
  for (const auto& info : count_vocabulary()) count_names.push_back(info.name);
  nlohmann::json counts_properties = nlohmann::json::object();
  for (const auto& info : count_vocabulary())
    counts_properties[info.name] = {{"description", std::string(info.unit) + ": " + info.meaning},
                                    {"type", nlohmann::json::array({"number", "string"})}};
  nlohmann::json dims = {{"type", "array"},
                         {"minItems", 1},
                         {"maxItems", 3},
                         {"items", {{"type", nlohmann::json::array({"integer", "string"})}}}};
  return {
      {"type", "object"},
      {"required", {"name", "launch", "counts"}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"launch",
         {{"type", "object"},
          {"required", {"blocks", "threads_per_block"}},
          {"properties", {{"blocks", dims}, {"threads_per_block", dims}}}}},
        {"parameters", {{"type", "object"}, {"additionalProperties", {{"type", "number"}}}}},
        {"counts",
         {{"type", "object"}, {"properties", counts_properties}, {"additionalProperties", false}}},
        {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}};
}

nlohmann::json agent_request_body(const AgentRequest& request, const std::string& correction) {
  std::string system =
      "You are a performance-modeling code-translation agent. Given GPU kernel source and its "
      "launch, answer with the kernel's application model as JSON following the schema: launch "
      "geometry, and totals over the launch of FLOPs per precision (NVIDIA's convention: add, "
      "subtract and multiply count 1, fused multiply-add 2, transcendental functions 0, a "
      "single-precision division 10), memory instructions and bytes by space (global, lds, "
      "scalar, private), loads and stores apart, and DRAM bytes. Counts may be expressions of "
      "the size parameters you declare in 'parameters'. Answer with the JSON object only.";
  std::string user =
      "Kernel: " + request.kernel + "\nLaunch: " + request.launch + "\nSource:\n" + request.source;
  nlohmann::json messages = nlohmann::json::array(
      {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
  if (!correction.empty())
    messages.push_back({{"role", "user"},
                        {"content", "Your previous answer was refused: " + correction +
                                        ". Answer again with a corrected JSON object."}});
  return {{"model", request.model},
          {"temperature", 0},
          {"messages", messages},
          {"response_format",
           {{"type", "json_schema"},
            {"json_schema",
             {{"name", "wavekit_kernel_model"}, {"strict", false}, {"schema", agent_schema()}}}}}};
}

AgentResult ask_agent(const AgentRequest& request) {
  AgentResult result;
  std::string url = request.endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() < 17 || url.substr(url.size() - 17) != "/chat/completions")
    url += "/chat/completions";
  std::vector<std::string> headers;
  if (!request.api_key.empty()) headers.push_back("Authorization: Bearer " + request.api_key);
  std::string correction, last_error;
  for (int attempt = 0; attempt < std::max(1, request.attempts); ++attempt) {
    nlohmann::json body = agent_request_body(request, correction);
    HttpResponse response = http_post(url, body.dump(), headers, request.timeout_seconds);
    result.exchanges.push_back(
        {{"request", body}, {"status", response.status}, {"answer", response.body}});
    if (response.status != 200)
      throw Error("endpoint " + url + ": HTTP status " + std::to_string(response.status) + ": " +
                  response.body.substr(0, 300));
    std::string content;
    try {
      nlohmann::json answer = nlohmann::json::parse(response.body);
      content = answer.at("choices").at(0).at("message").at("content").get<std::string>();
    } catch (const std::exception& e) {
      throw Error("endpoint " + url + ": not a chat-completions answer: " + e.what());
    }
    // Models sometimes wrap JSON in a fenced block.
    if (auto fence = content.find("```"); fence != std::string::npos) {
      auto start = content.find('\n', fence);
      auto end = content.rfind("```");
      if (start != std::string::npos && end > start)
        content = content.substr(start + 1, end - start - 1);
    }
    try {
      nlohmann::json document = nlohmann::json::parse(content);
      result.model = kernel_from_json(document, "agent answer");
      result.model.source = "agent";
      for (const auto& problem : check_kernel(result.model))
        result.problems.push_back("evaluator: " + problem);
      return result;
    } catch (const nlohmann::json::exception& e) {
      last_error = std::string("the answer is not JSON (") + e.what() + ")";
    } catch (const Error& e) {
      last_error = e.what();
    }
    correction = last_error;
  }
  throw Error("the agent's answer breaks the schema: " + last_error);
}

std::vector<std::string> compare_models(const KernelModel& agent, const KernelModel& binary,
                                        double tolerance) {
  std::vector<std::string> differences;
  KernelModel a = agent.counts_expression.empty() ? agent : agent.at(binary.parameters);
  for (const auto& [key, value] : binary.counts) {
    if (key.rfind("resources.", 0) == 0 || key == "l2.hit_rate") continue;
    if (!a.counts.count(key)) continue;
    double other = a.counts.at(key);
    double error = std::fabs(other - value) / std::max(1.0, std::fabs(value));
    if (error > tolerance)
      differences.push_back(key + ": agent " + format_number(other) + ", binary " +
                            format_number(value) + " (" +
                            format_number(std::round(error * 1000) / 10) + " % apart)");
  }
  for (int axis = 0; axis < 3; ++axis)
    if (a.blocks[axis] != binary.blocks[axis] ||
        a.threads_per_block[axis] != binary.threads_per_block[axis]) {
      differences.push_back("launch geometry differs from the binary path's");
      break;
    }
  return differences;
}

}  // namespace wavekit::model
