module sievefs/s3link

go 1.19
