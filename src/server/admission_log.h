#pragma once
// The admission log: what the server records about each answered review. The webhook itself does
// no I/O (admission/webhook.h); its Outcome says what happened and this turns it into counters
// and one log line.
#include "rdma_webhook/admission/webhook.h"
#include "rdma_webhook/server/metrics.h"

namespace rw::server {

// Counts the decision and its findings when a review was decided, and logs: a 500 at error (the
// core failed), a denial at info (one line per denial, naming its error rules), a 400 and an
// allowed review at debug only, so a busy cluster's log stays about what needs a person.
void RecordAdmission(admission::Endpoint endpoint, const admission::Outcome& outcome,
                     Metrics& metrics);

}  // namespace rw::server
