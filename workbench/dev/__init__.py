"""Development servers and data: the demo, its event generator and producer, and local
Kafka, Spark, MirrorMaker 2 and time-series servers for a dev box and the tests."""
