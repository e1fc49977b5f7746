// Reports: MLflow parameters, the per-step CSV and the Chrome timeline.
#include "real/train/trainer.hpp"

namespace cclab::real {

void Trainer::log_params(train::MlflowRun& run) {
  run.param("model", o_.model);
  run.param("world_size", std::to_string(P_));
  run.param("batch_per_rank", std::to_string(o_.batch));
  run.param("algorithm", o_.algo);
  run.param("fusion", o_.fusion);
  run.param("bucket_bytes", std::to_string(o_.bucket_bytes));
  run.param("fp16", o_.fp16 ? "true" : "false");
  run.param("lr", fmt::format("{}", o_.lr));
  run.param("transport", transport_.name());
  run.param("seed", std::to_string(o_.seed));
}

void Trainer::write_csv() {
  if (o_.csv.empty()) return;
  std::ofstream out(o_.csv);
  out << "step,epoch,loss,accuracy,lr,step_s,compute_s,comm_s,exposed_comm_s,samples_per_s,replicas_"
         "identical\n";
  for (const StepRecord& r : records_) {
    out << fmt::format("{},{},{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.2f},{}\n", r.step, r.epoch,
                       r.loss, r.accuracy, r.lr, r.step_s, r.compute_s, r.comm_s, r.comm_s,
                       P_ * o_.batch / r.step_s, o_.validate ? (r.identical ? "yes" : "no") : "unchecked");
  }
  if (!out) throw BackendError(fmt::format("{}: cannot write the step CSV", o_.csv));
  print0("# wrote {}\n", o_.csv);
}

void Trainer::write_timeline() {
  if (o_.timeline.empty()) return;
  TraceRows rows;
  rows.processes[0] = "rank 0";
  rows.threads[{0, 0}] = "step (compute + exposed communication)";
  rows.threads[{0, 1}] = "allreduce buckets";
  std::ofstream out(o_.timeline);
  write_chrome_trace_spans(spans_, rows, out);
  if (!out) throw BackendError(fmt::format("{}: cannot write the timeline", o_.timeline));
  print0("# wrote {} (chrome://tracing or ui.perfetto.dev)\n", o_.timeline);
}

}  // namespace cclab::real
