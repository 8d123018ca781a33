// Wiring only: every command lives in src/cli.
#include "rdma_webhook/cli/app.h"

int main(int argc, char** argv) { return rw::cli::Run(argc, argv); }
