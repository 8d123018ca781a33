#include "reflector.h"

#include <cctype>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rw::server {
namespace {

namespace net = boost::asio;
using log::Level;

constexpr auto kTuple = net::as_tuple(net::use_awaitable);
// One LIST page, request to last byte.
constexpr std::chrono::seconds kListDeadline{60};
// A watch whose server neither ends it at timeoutSeconds nor sends anything by this much later
// is taken as broken.
constexpr std::chrono::seconds kWatchGrace{30};

std::string Query(std::string_view key, const std::string& value) {
  // resourceVersion and continue tokens are opaque: escape what is not unreserved (RFC 3986).
  std::string out(key);
  out += '=';
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string_view EventLabel(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "added";
    case EventType::kModified:
      return "modified";
    case EventType::kDeleted:
      return "deleted";
    case EventType::kBookmark:
      return "bookmark";
    case EventType::kError:
      break;
  }
  return "error";
}

// The Status message of a refusal, or its first bytes when it is none.
std::string Reason(const KubeAnswer& answer) {
  if (auto status = ParseStatus(answer.body)) return status->message;
  return answer.body.substr(0, 200);
}

}  // namespace

Reflector::Reflector(const WatchedKind& kind, const WatchOptions& options, KubeClient& client,
                     Env& env, Metrics& metrics, Hooks hooks)
    : kind_(kind),
      options_(options),
      client_(client),
      env_(env),
      metrics_(metrics),
      hooks_(std::move(hooks)),
      name_(kind.Name()),
      store_(options.max_objects),
      random_(std::random_device{}()) {
  metrics_.SetWatchSynced(name_, false);
  metrics_.SetWatchObjects(name_, 0);
}

std::chrono::milliseconds Reflector::NextBackoff() {
  const double unit = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  return BackoffDelay(failures_++, options_.backoff_initial, options_.backoff_max, unit);
}

net::awaitable<void> Reflector::Sleep(std::chrono::milliseconds how_long) {
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(how_long);
  co_await timer.async_wait(kTuple);
}

void Reflector::Touch() {
  const auto now = env_.Now().time_since_epoch();
  metrics_.SetWatchLastEvent(name_, std::chrono::duration<double>(now).count());
}

void Reflector::Changed() {
  metrics_.SetWatchObjects(name_, store_.size());
  hooks_.changed();
}

bool Reflector::KeepThroughRefusal() {
  // A kube-apiserver that has just started serves before its RBAC caches are filled: for a
  // moment it answers 403 where it allowed (seen in the e2e suite's API server restart); 404 is
  // taken alike, as a CRD is served only once the new server has loaded it. Emptying the store
  // then would leave the decisions to the policy until --watch-absent-retry (60 s) passed: the
  // objects are kept and the LIST asked again with backoff, and only a refusal that lasts longer
  // than that period empties the store.
  if (!holds_listing_) return false;
  const auto now = env_.Now();
  if (!refused_since_) refused_since_ = now;
  return now - *refused_since_ < options_.absent_retry;
}

bool Reflector::ForbiddenLong() const {
  return forbidden_since_ && env_.Now() - *forbidden_since_ >= options_.absent_retry;
}

void Reflector::Enter(State state, const nlohmann::json& fields) {
  const bool was = state_ == state;
  state_ = state;
  metrics_.SetWatchSynced(name_, state == State::kListed);
  if (!settled_ && state != State::kFailing) {
    settled_ = true;
    hooks_.settled();
  }
  // A 403 first logged as a warning is logged again, as an error, once it has lasted longer
  // than --watch-absent-retry.
  const bool escalate = state == State::kForbidden && !forbidden_error_logged_ && ForbiddenLong();
  if (was && state != State::kFailing && !escalate) return;
  nlohmann::json f = fields;
  f["resource"] = name_;
  switch (state) {
    case State::kListed:
      env_.Log(Level::kInfo, "cluster watch: listed", f);
      break;
    case State::kAbsent:
      f["retrySeconds"] = std::chrono::duration<double>(options_.absent_retry).count();
      env_.Log(Level::kInfo,
               "cluster watch: the API server does not serve this resource (its CRD is not "
               "installed?); the policy alone decides what its objects would; asking again later",
               f);
      break;
    case State::kForbidden:
      f["retrySeconds"] = std::chrono::duration<double>(options_.absent_retry).count();
      f["missing"] = "get, list, watch on " + std::string(kind_.resource) + " in API group " +
                     std::string(kind_.group);
      // A first 403 may be a restarted API server whose RBAC caches are not filled yet (a kind
      // never listed has no objects to keep through it): a warning, and an error only when it
      // lasts longer than the retry period.
      forbidden_error_logged_ = ForbiddenLong();
      if (forbidden_error_logged_)
        env_.Log(Level::kError,
                 "cluster watch: RBAC forbids this ServiceAccount to list the resource; the "
                 "policy alone decides what its objects would (grant the missing verbs in the "
                 "chart's ClusterRole); asking again later",
                 f);
      else
        env_.Log(Level::kWarn,
                 "cluster watch: RBAC forbids this ServiceAccount to list the resource, for now "
                 "(an API server that has just started refuses for a moment); the policy alone "
                 "decides what its objects would; asking again after retrySeconds, and an error if "
                 "it lasts",
                 f);
      break;
    case State::kFailing:
      // Every failure is logged: the backoff spaces them to one per 30 s at most.
      env_.Log(Level::kWarn, "cluster watch: LIST failed; retrying with backoff", f);
      break;
    case State::kStarting:
      break;
  }
}

net::awaitable<Reflector::State> Reflector::List() {
  std::vector<nlohmann::json> items;
  std::string continue_token, version;
  for (;;) {
    std::string target =
        kind_.CollectionPath() + "?" + Query("limit", std::to_string(options_.page_size));
    if (!continue_token.empty()) target += "&" + Query("continue", continue_token);
    KubeAnswer answer;
    try {
      answer = co_await client_.Get(target, options_.max_list_bytes, kListDeadline);
    } catch (const KubeError& e) {
      metrics_.CountWatchList(name_, "error");
      Enter(State::kFailing, {{"error", e.what()}});
      co_return State::kFailing;
    }
    if (answer.status == 404 || answer.status == 403) {
      const bool absent = answer.status == 404;
      if (absent)
        forbidden_since_.reset();
      else if (!forbidden_since_)
        forbidden_since_ = env_.Now();
      metrics_.CountWatchList(name_, absent ? "absent" : "forbidden");
      if (KeepThroughRefusal()) {
        Enter(
            State::kFailing,
            {{"status", answer.status}, {"error", Reason(answer)}, {"keptObjects", store_.size()}});
        co_return State::kFailing;
      }
      const State state = absent ? State::kAbsent : State::kForbidden;
      Enter(state, {{"status", answer.status}, {"apiMessage", Reason(answer)}});
      co_return state;
    }
    if (answer.status == 410 && !continue_token.empty()) {
      // The continue token expired between pages: start again from the first.
      metrics_.CountWatchList(name_, "gone");
      items.clear();
      continue_token.clear();
      continue;
    }
    if (answer.status != 200) {
      metrics_.CountWatchList(name_, "error");
      Enter(State::kFailing, {{"status", answer.status}, {"error", Reason(answer)}});
      co_return State::kFailing;
    }
    try {
      ListPage page = ParseListPage(answer.body, kind_);
      answer.body = std::string();
      if (items.size() + page.items.size() > options_.max_objects) {
        metrics_.CountWatchList(name_, "error");
        Enter(State::kFailing, {{"error", "more objects than --watch-max-objects"},
                                {"maxObjects", options_.max_objects}});
        co_return State::kFailing;
      }
      for (auto& item : page.items) items.push_back(std::move(item));
      version = std::move(page.resource_version);
      continue_token = std::move(page.continue_token);
    } catch (const ProtocolError& e) {
      metrics_.CountWatchList(name_, "error");
      Enter(State::kFailing, {{"error", e.what()}});
      co_return State::kFailing;
    }
    if (continue_token.empty()) break;
  }
  try {
    if (store_.Replace(std::move(items)) == ObjectStore::Result::kChanged || !listed()) Changed();
  } catch (const ProtocolError& e) {
    metrics_.CountWatchList(name_, "error");
    Enter(State::kFailing, {{"error", e.what()}});
    co_return State::kFailing;
  }
  metrics_.CountWatchList(name_, "ok");
  holds_listing_ = true;
  refused_since_.reset();
  forbidden_since_.reset();
  forbidden_error_logged_ = false;
  resource_version_ = std::move(version);
  Touch();
  co_return State::kListed;
}

net::awaitable<Reflector::WatchEnd> Reflector::Watch() {
  // Each watch asks for a timeout in [t, 2t) so the watches of many replicas do not end together.
  const auto base = options_.watch_timeout.count();
  const auto timeout =
      base + std::uniform_int_distribution<long long>(0, base > 0 ? base - 1 : 0)(random_);
  const std::string target = kind_.CollectionPath() + "?watch=1&allowWatchBookmarks=true&" +
                             Query("resourceVersion", resource_version_) + "&" +
                             Query("timeoutSeconds", std::to_string(timeout));
  LineSplitter lines(options_.max_object_bytes);
  WatchEnd end = WatchEnd::kTimedOut;
  std::string failure;
  const auto on_line = [&](std::string_view line) {
    WatchEvent event;
    try {
      event = ParseWatchEvent(line, kind_);
    } catch (const ProtocolError& e) {
      failure = e.what();
      end = WatchEnd::kRelist;
      return false;
    }
    metrics_.CountWatchEvent(name_, EventLabel(event.type));
    Touch();
    failures_ = 0;
    if (event.type == EventType::kError) {
      failure = event.message;
      end = event.code == 410 ? WatchEnd::kGone : WatchEnd::kBroken;
      return false;
    }
    std::string version = event.resource_version;
    const auto result = store_.Apply(std::move(event));
    if (result == ObjectStore::Result::kOverLimit) {
      failure = "more objects than --watch-max-objects";
      end = WatchEnd::kRelist;
      return false;
    }
    resource_version_ = std::move(version);
    if (result == ObjectStore::Result::kChanged) Changed();
    return true;
  };
  KubeAnswer answer;
  try {
    answer =
        co_await client_.Watch(target, lines, std::chrono::seconds(timeout) + kWatchGrace, on_line);
  } catch (const KubeError& e) {
    failure = e.what();
    end = e.kind() == KubeError::Kind::kTooLarge ? WatchEnd::kRelist : WatchEnd::kBroken;
  }
  if (answer.status == 410) {
    end = WatchEnd::kGone;
  } else if (answer.status != 0 && answer.status != 200) {
    failure = "HTTP " + std::to_string(answer.status) + ": " + Reason(answer);
    // 403 or 404 here: RBAC or the CRD changed since the LIST, which says which.
    end = answer.status == 403 || answer.status == 404 ? WatchEnd::kRelist : WatchEnd::kBroken;
  }
  metrics_.CountWatchRestart(name_, end == WatchEnd::kTimedOut ? "eof"
                                    : end == WatchEnd::kGone   ? "gone"
                                                               : "error");
  if (end == WatchEnd::kBroken || end == WatchEnd::kRelist) {
    env_.Log(end == WatchEnd::kRelist ? Level::kWarn : Level::kInfo,
             end == WatchEnd::kRelist ? "cluster watch: watch ended; listing again"
                                      : "cluster watch: watch broke; watching again with backoff",
             {{"resource", name_}, {"error", failure}, {"resourceVersion", resource_version_}});
  } else if (end == WatchEnd::kGone) {
    env_.Log(Level::kInfo, "cluster watch: resourceVersion expired (410 Gone); listing again",
             {{"resource", name_}, {"resourceVersion", resource_version_}});
  }
  co_return end;
}

net::awaitable<void> Reflector::Run() {
  for (;;) {
    const State state = co_await List();
    if (state == State::kListed) {
      failures_ = 0;
      Enter(State::kListed, {{"objects", store_.size()}, {"resourceVersion", resource_version_}});
      bool relist = false;
      while (!relist) {
        switch (co_await Watch()) {
          case WatchEnd::kTimedOut:
            failures_ = 0;
            break;
          case WatchEnd::kGone:
            relist = true;
            break;
          case WatchEnd::kRelist:
            relist = true;
            co_await Sleep(NextBackoff());
            break;
          case WatchEnd::kBroken:
            co_await Sleep(NextBackoff());
            break;
        }
      }
      continue;
    }
    if (state == State::kAbsent || state == State::kForbidden) {
      holds_listing_ = false;
      if (store_.size() != 0) {
        store_.Clear();
        Changed();
      }
      failures_ = 0;
      co_await Sleep(options_.absent_retry);
      continue;
    }
    co_await Sleep(NextBackoff());
  }
}

}  // namespace rw::server
