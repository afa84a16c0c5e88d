"""Running Spark: the one SparkSession factory, its JVM options and logs, jars fetched from
Maven and npm, a job's Spark configuration, and Spark errors as one paragraph."""
