// Training: determinism, exact resume, damaged checkpoints, and the loss
// falling on real English text (fortunes, installed by scripts/install-deps.sh).
#include "executor/train/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "executor/comm/self_communicator.h"
#include "executor/data/token_shards.h"
#include "executor/train/checkpoint.h"
#include "model/error.h"
#include "tests/input_error_of.h"
#include "model/presets.h"

namespace axo {
namespace {

namespace fs = std::filesystem;

class Training : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    // Real text: the fortunes corpus.
    std::string text;
    for (const char* name : {"literature", "wisdom", "people", "science"}) {
      std::ifstream in(std::string("/usr/share/games/fortunes/") + name, std::ios::binary);
      ASSERT_TRUE(in) << "the fortunes package provides the test corpus (scripts/install-deps.sh)";
      std::stringstream buffer;
      buffer << in.rdbuf();
      text += buffer.str();
    }
    const auto tokens = encode_bytes(text);
    const size_t split = tokens.size() * 9 / 10;
    write_token_shard(path("train.bin"), std::vector<uint16_t>(tokens.begin(), tokens.begin() + std::ptrdiff_t(split)));
    write_token_shard(path("val.bin"), std::vector<uint16_t>(tokens.begin() + std::ptrdiff_t(split), tokens.end()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  TrainOptions options(int64_t steps) const {
    TrainOptions o;
    o.data = path("train.bin");
    o.steps = steps;
    o.batch = 8;
    o.microbatch = 4;
    o.seq = 32;
    o.lr = 3e-3;
    o.warmup = 5;
    return o;
  }
  // options(steps) checkpointing every 2 steps into ckpt/.
  TrainOptions checkpointed(int64_t steps) const {
    TrainOptions o = options(steps);
    o.checkpoint_dir = path("ckpt"), o.checkpoint_every = 2;
    return o;
  }
  std::vector<double> losses(const std::vector<StepRecord>& records) const {
    std::vector<double> values;
    for (const StepRecord& r : records) values.push_back(r.loss);
    return values;
  }
  fs::path dir_ = fs::temp_directory_path() / ("axo_training_" + std::to_string(::getpid()));
  std::ostringstream log_;
  SelfCommunicator self_;
};

TEST_F(Training, SameSeedSameLosses) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  Trainer a(spec, options(6), self_, log_), b(spec, options(6), self_, log_);
  EXPECT_EQ(losses(a.run()), losses(b.run()));
  EXPECT_EQ(a.parameters(), b.parameters());
}

TEST_F(Training, ResumeIsBitIdenticalAndSurvivesADamagedCheckpoint) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  Trainer whole(spec, options(10), self_, log_);
  const std::vector<double> expected = losses(whole.run());

  TrainOptions first = checkpointed(10);
  first.stop_after = 5;  // checkpoints at steps 2, 4 and 5; the newest two are kept
  Trainer interrupted(spec, first, self_, log_);
  interrupted.run();
  EXPECT_FALSE(fs::exists(checkpoint_path(path("ckpt"), 2)));
  ASSERT_TRUE(fs::exists(checkpoint_path(path("ckpt"), 5)));

  // Damage the newest: its checksum fails and step 4's is used.
  {
    std::fstream file(checkpoint_path(path("ckpt"), 5), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(200);
    file.put('\x7f');
  }
  TrainOptions rest = options(10);
  rest.checkpoint_dir = path("ckpt");
  rest.resume = true;
  std::ostringstream log;
  Trainer resumed(spec, rest, self_, log);
  const std::vector<StepRecord> records = resumed.run();
  EXPECT_NE(log.str().find("checksum mismatch"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("resuming from step 4"), std::string::npos) << log.str();
  ASSERT_EQ(records.size(), 6u);
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].loss, expected[4 + i]) << "step " << records[i].step;
  EXPECT_EQ(resumed.parameters(), whole.parameters());
}

// A resumed run sets a damaged checkpoint aside, so the newest two it keeps are good ones.
TEST_F(Training, ResumeSetsDamagedCheckpointsAsideAndKeepsTheGoodOnes) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  TrainOptions first = checkpointed(10);
  first.stop_after = 5;  // keeps steps 4 and 5
  Trainer(spec, first, self_, log_).run();
  fs::resize_file(checkpoint_path(path("ckpt"), 5), 1000);
  TrainOptions rest = first;
  rest.checkpoint_every = 0, rest.stop_after = 7, rest.resume = true;  // writes step 7 only
  std::ostringstream log;
  Trainer(spec, rest, self_, log).run();
  EXPECT_NE(log.str().find("resuming from step 4"), std::string::npos) << log.str();
  EXPECT_EQ(checkpoint_files(path("ckpt")),
            (std::vector<std::string>{checkpoint_path(path("ckpt"), 7), checkpoint_path(path("ckpt"), 4)}));
  EXPECT_TRUE(fs::exists(checkpoint_path(path("ckpt"), 5) + ".damaged"));
}

// Resume refuses a checkpoint already at --steps, another batch than its own, and a folder whose
// checkpoints are all damaged.
TEST_F(Training, ResumeRefusesDamagedOnlyAndFinishedFolders) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  TrainOptions first = checkpointed(4);
  Trainer(spec, first, self_, log_).run();
  TrainOptions again = first;
  again.resume = true;
  EXPECT_THROW(Trainer(spec, again, self_, log_).run(), InputError);  // step 4 of 4: nothing left to run
  auto resume_error = [&] { return testing::input_error_of([&] { Trainer(spec, again, self_, log_).run(); }); };
  again.stop_after = 3;
  EXPECT_NE(resume_error().find("--stop-after 3: "), std::string::npos) << resume_error();
  again.steps = 6, again.stop_after = 0;  // the cosine schedule follows --steps: the rates would change
  EXPECT_NE(resume_error().find("--steps 6: "), std::string::npos) << resume_error();
  EXPECT_NE(resume_error().find("was trained with --steps 4"), std::string::npos) << resume_error();
  again.steps = 4, again.weight_decay = first.weight_decay * (1 + 1e-12);  // compared as numbers, not six digits
  EXPECT_NE(resume_error().find("--weight-decay 0.10000000000010001: "), std::string::npos) << resume_error();
  again.weight_decay = first.weight_decay, again.warmup = first.warmup + 1;
  EXPECT_NE(resume_error().find("--warmup "), std::string::npos) << resume_error();
  again.warmup = first.warmup, again.grad_clip = 0;
  EXPECT_NE(resume_error().find("--grad-clip 0: "), std::string::npos) << resume_error();
  again.grad_clip = first.grad_clip;
  again.stop_after = 0, again.batch = 4;
  EXPECT_NE(resume_error().find("was trained with --batch 8 --seq 32"), std::string::npos) << resume_error();
  again.batch = 8;
  for (const std::string& file : checkpoint_files(path("ckpt"))) fs::resize_file(file, 100);
  EXPECT_NE(resume_error().find("every checkpoint in"), std::string::npos) << "restarted from step 0";
}

// A constant rate does not follow --steps: its run may be resumed for more steps.
TEST_F(Training, AConstantRateRunMayBeLengthened) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  TrainOptions first = checkpointed(4);
  first.lr_schedule = LrSchedule::constant;
  Trainer(spec, first, self_, log_).run();
  TrainOptions longer = first;
  longer.resume = true, longer.steps = 6;
  EXPECT_EQ(Trainer(spec, longer, self_, log_).run().size(), 2u);  // steps 5 and 6
}

// A run that does not resume never writes into (and prunes) another run's checkpoints.
TEST_F(Training, AFreshRunRefusesAnotherRunsCheckpointFolder) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  TrainOptions first = checkpointed(4);
  Trainer(spec, first, self_, log_).run();
  const std::vector<std::string> before = checkpoint_files(path("ckpt"));
  TrainOptions second = options(6);
  second.checkpoint_dir = path("ckpt");
  second.stop_after = 1;
  const std::string error = testing::input_error_of([&] { Trainer(spec, second, self_, log_); });
  EXPECT_NE(error.find("holds another run's checkpoints"), std::string::npos) << error;
  second.checkpoint_dir = path("train.bin");  // a file
  EXPECT_NE(testing::input_error_of([&] { Trainer(spec, second, self_, log_); }).find("is a file, not a folder"),
            std::string::npos);
  EXPECT_EQ(checkpoint_files(path("ckpt")), before);
}

// --stop-after checkpoints the step it stops at, even without --checkpoint-every, and needs a folder.
TEST_F(Training, StopAfterCheckpointsItsLastStep) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  Trainer whole(spec, options(6), self_, log_);
  whole.run();
  TrainOptions first = options(6);
  first.stop_after = 3;
  EXPECT_THROW(Trainer(spec, first, self_, log_), InputError);
  first.checkpoint_dir = path("ckpt");
  Trainer(spec, first, self_, log_).run();
  ASSERT_TRUE(fs::exists(checkpoint_path(path("ckpt"), 3)));
  TrainOptions rest = options(6);
  rest.checkpoint_dir = path("ckpt"), rest.resume = true;
  Trainer resumed(spec, rest, self_, log_);
  EXPECT_EQ(resumed.run().size(), 3u);
  EXPECT_EQ(resumed.parameters(), whole.parameters());
}

// fp16's loss scale, backed off by an overflow before the stop, resumes where it was.
TEST_F(Training, Fp16ResumeKeepsTheLossScale) {
  const TransformerSpec spec = load_model("gpt2-tiny");
  TrainOptions o = options(6);
  o.precision = Precision::fp16, o.loss_scaling = true, o.overflow_rank = 0, o.overflow_step = 2;
  Trainer whole(spec, o, self_, log_);
  whole.run();
  TrainOptions first = o;
  first.checkpoint_dir = path("ckpt"), first.stop_after = 3;
  Trainer(spec, first, self_, log_).run();
  EXPECT_EQ(read_checkpoint(checkpoint_path(path("ckpt"), 3)).loss_scaler.scale, 32768.0);  // 2^16 backed off once
  TrainOptions rest = o;
  rest.checkpoint_dir = path("ckpt"), rest.resume = true;
  Trainer resumed(spec, rest, self_, log_);
  resumed.run();
  EXPECT_EQ(resumed.parameters(), whole.parameters());
}

// A fault on a rank the run lacks, or after its last step, is refused: it would inject nothing.
// One before a resumed checkpoint is the same command run again (the test above).
TEST_F(Training, AFaultThatCannotFireIsRefused) {
  TrainOptions o = options(3);
  o.overflow_rank = 1, o.overflow_step = 2;
  EXPECT_NE(testing::input_error_of([&] { Trainer(load_model("gpt2-tiny"), o, self_, log_).run(); })
                .find("--inject-fault overflow:1:2 cannot fire: this run has ranks 0..0 and runs to step 3"),
            std::string::npos);
  o.overflow_rank = -1, o.kill_rank = 0, o.kill_step = 4;
  EXPECT_NE(testing::input_error_of([&] { Trainer(load_model("gpt2-tiny"), o, self_, log_).run(); })
                .find("--inject-fault kill:0:4 cannot fire"),
            std::string::npos);
}

// Validation averages the same tokens whatever the microbatch.
TEST_F(Training, ValidationLossDoesNotDependOnTheMicrobatch) {
  auto val_loss = [&](int64_t microbatch) {
    TrainOptions o = options(2);
    o.microbatch = microbatch, o.val_data = path("val.bin"), o.val_every = 2;
    Trainer trainer(load_model("gpt2-tiny"), o, self_, log_);
    return trainer.run().back().val_loss;
  };
  const double eight = val_loss(8);
  EXPECT_GT(eight, 0);
  EXPECT_NEAR(val_loss(4), eight, 1e-6 * eight);
  EXPECT_NEAR(val_loss(2), eight, 1e-6 * eight);
}

// Validation data too small for one batch is refused before any step trains.
TEST_F(Training, ValidationDataSmallerThanABatchIsRefusedBeforeTraining) {
  write_token_shard(path("small.bin"), std::vector<uint16_t>(8 * 32, 7));  // one token short of a batch
  TrainOptions o = options(3);
  o.val_data = path("small.bin"), o.val_every = 1;
  Trainer trainer(load_model("gpt2-tiny"), o, self_, log_);
  EXPECT_NE(testing::input_error_of([&] { trainer.run(); }).find("fewer than one validation batch of --batch 8 × 32 + 1"),
            std::string::npos);
  EXPECT_EQ(log_.str().find("step"), std::string::npos) << "it trained before checking";
}

TEST_F(Training, LossFallsOnRealText) {
  TrainOptions o = options(150);
  o.val_data = path("val.bin");
  o.val_every = 150;
  o.run_json = path("run.json");
  Trainer trainer(load_model("gpt2-tiny"), o, self_, log_);
  const std::vector<StepRecord> records = trainer.run();
  // A byte-level model starts at ln 256 = 5.55 and learns English letter statistics.
  EXPECT_NEAR(records.front().loss, 5.55, 0.1);
  EXPECT_LT(records.back().val_loss, 3.0);
  EXPECT_LT(records.back().loss, records.front().loss - 2.5);
  EXPECT_TRUE(fs::exists(path("run.json")));
}

TEST_F(Training, TokensOutsideTheVocabularyAreRefusedBeforeTraining) {
  std::vector<uint16_t> tokens(4096, 7);
  tokens[100] = 300;  // gpt2-tiny has 256 tokens
  write_token_shard(path("bad.bin"), tokens);
  TrainOptions o = options(3);
  o.val_data = path("bad.bin");
  o.val_every = 1;
  Trainer trainer(load_model("gpt2-tiny"), o, self_, log_);
  EXPECT_EQ(testing::input_error_of([&] { trainer.run(); }),
            "--val-data: token 300 (" + path("bad.bin") + ", position 100) is outside the model's vocabulary of 256");
  EXPECT_EQ(log_.str().find("step"), std::string::npos) << "it trained before checking";
}

TEST_F(Training, LearningRateWarmsUpAndDecays) {
  TrainOptions o = options(100);
  o.warmup = 10;
  o.lr = 1e-3;
  Trainer trainer(load_model("gpt2-tiny"), o, self_, log_);
  EXPECT_NEAR(trainer.learning_rate(0), 1e-4, 1e-12);
  EXPECT_NEAR(trainer.learning_rate(9), 1e-3, 1e-12);
  EXPECT_NEAR(trainer.learning_rate(99), 1e-4, 1e-6);
  EXPECT_GT(trainer.learning_rate(50), trainer.learning_rate(80));
}

}  // namespace
}  // namespace axo
