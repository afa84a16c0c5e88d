"""Sources of stream tables: bounded recordings (JSON Lines, Parquet) and Kafka."""
