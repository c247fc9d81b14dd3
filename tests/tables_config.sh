# Sourced by the process tests that run a small model with embedding tables: a config over two id
# columns of `psgrad data click-logs`, 20 sync steps of batch 32, seed 1. The caller may append sections.
write_tables_config() {  # config-file data-file
  cat >"$1" <<TOML
[training]
iterations = 20
batch_size = 32
seed = 1
[evaluation]
frequency = 10
[model]
"@layers" = "hashembed_mlp.v1"
embedding_widths = [8, 8]
embedding_rows = [4096, 4096]
hidden_width = 16
[data]
path = "$2"
label = "label"
dev_fraction = 0.2
[data.columns]
C1 = "ids"
C2 = "ids"
TOML
}
