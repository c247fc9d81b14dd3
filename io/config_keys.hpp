// The fixed sections' keys, each declared once: name, member, description and limits.
#pragma once

#include "io/config_table.hpp"

namespace psgrad::config_table {

const SectionTable<TrainingSection>& training_table();
const SectionTable<EvaluationSection>& evaluation_table();
const SectionTable<TablesSection>& tables_table();
const SectionTable<DataSection>& data_table();
const SectionTable<ClusterSection>& cluster_table();

}  // namespace psgrad::config_table
