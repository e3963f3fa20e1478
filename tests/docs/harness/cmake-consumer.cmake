# The project around a documented CMake fragment: one program (consumer.c) that links nnclient.
cmake_minimum_required(VERSION 3.16)
project(doc_test_consumer C)
add_executable(@TARGET@ consumer.c)
@FRAGMENT@
